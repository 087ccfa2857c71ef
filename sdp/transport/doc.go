// SPDX-License-Identifier: Apache-2.0

// Package transport carries SDP frames between otelcol-sdp and its sidecars.
//
// A [Client] owns one shard's connection: it opens every connection with a
// Hello, numbers the ResourceFrames it writes (1 for the first after Hello,
// then +1), and holds each frame in a queue bounded in bytes until an Ack
// settles it. Frames that a lost connection leaves unacknowledged are sent
// again on the next one, so delivery is at least once. A [Server] is the
// sidecar's end: it checks the Hello, decodes frames within the SDP limits,
// hands them to a [Handler] one at a time per connection and acknowledges
// each: frames accepted together share one Ack for the last of them (an Ack
// settles every frame up to its sequence), and every frame not accepted
// gets an Ack of its own.
//
// A client stamps its shard on every frame it sends, and [Client.CloseAndTake]
// stops it and hands back the frames it still held, queued or unacknowledged,
// in order and unsettled: a sender whose destination leaves (a member of a
// changing fleet) sends them elsewhere and settles each one in its original
// batch with [Held.Settle].
//
// A sidecar must read a frame whole, and take what it needs of it, before
// it sends an Ack whose sequence covers that frame. The client forgets a
// frame once it is acknowledged, and may still be writing the frame when
// the Ack arrives: were a sidecar to acknowledge a frame it had read only in
// part and the connection then broke, the frame would be lost. [Server]
// acknowledges a frame only after its [Handler] has returned for it, and,
// for a Handler that is also a [Syncer], only after Sync has made it
// durable.
//
// # Limits and hostile peers
//
// Each end reads the other's frames under the limits of the contract (see
// sdp.MaxHelloFrameSize and sdp.MaxAckFrameSize). A Server reads the first
// frame of a connection, which must be a Hello, under 4 KiB and before it
// allocates any larger buffer; reads every later frame beyond
// [FreeFrameBytes] in steps taken from a read budget that all connections
// share (Server.ReadBudget), so that a partial frame holds what it received
// plus one step and all of them together at most the budget; at MaxConns
// gives a new connection the place of the one that has waited longest for
// its Hello, or else lets it in on probation and, once it sends a valid
// Hello, closes the least useful quiet connection for it; closes a
// connection without a Hello after HelloTimeout, one on which no frame
// starts within IdleTimeout and one whose frame is not whole FrameTimeout
// after its first byte; and closes a connection whose frames name another
// shard than its Hello, a signal the schema does not define, or a wrong
// sequence. Peer warnings are rate-limited, strings a
// peer chose are cut to [MaxLoggedPeerString] bytes in logs, and
// [Server.Stats] counts what happened. A Client treats an Ack over
// sdp.MaxAckFrameSize as a protocol error of its sidecar: the frames that
// Ack covers settle with [ErrProtocol] instead of being sent again, and the
// client reconnects with growing backoff.
//
// # Endpoints and security
//
// Endpoints are written unix:///path/to/socket or tcp://host:port; see
// [ParseEndpoint]. [ListenConfig] creates unix sockets with mode 0600 by
// default (0660 lets a group in) without a moment in which they have another
// mode. For tcp:// endpoints, ClientSettings.TLS and ListenConfig.TLS take a
// *tls.Config: server certificates, and optionally
// tls.RequireAndVerifyClientCert with a CA pool so that only clients with a
// certificate from that CA can deliver frames.
//
// # Sockets on Linux
//
// On Linux the client and the server wait on plain unix and TCP sockets
// through an epoll set of their own that asks for input only, instead of
// the Go runtime's, which asks for output as well: a unix socket signals
// room to write each time its peer reads, and so woke a sleeping sidecar
// once more for every Ack the client read. Each such connection holds two
// more file descriptors (three while a write waits for room). TLS
// connections and other platforms use the runtime's connections.
//
// # Stability
//
// Stable (used by otelcol-sdp's sdpshard processor and reference sidecar;
// changed only with a deprecation first, recorded in the module's
// CHANGELOG.md): [NewClient], [Client] with Start, Send and Shutdown,
// [ClientSettings], [Frame], [Sent], [Observer]; [Server] with Serve,
// Shutdown and Stats, [ServerStats], [Handler], [HandlerFunc], [Syncer];
// [Listen], [ListenConfig], [ParseEndpoint]; [Truncate] and
// [MaxLoggedPeerString]; the Default constants; the errors [ErrClosed],
// [ErrQueueFull], [ErrRejected], [ErrUndelivered] and [ErrServerClosed].
// Loggers are *slog.Logger, so that the package forces no logging library on
// its users (the Collector's zap logger is adapted with zapslog).
// Experimental: the rest.
package transport
