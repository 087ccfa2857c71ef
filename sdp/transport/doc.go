// Package transport carries SDP frames between otelcol-sdp and its sidecars.
//
// A [Client] owns one shard's connection: it opens every connection with a
// Hello, numbers the ResourceFrames it writes (1 for the first after Hello,
// then +1), and holds each frame in a queue bounded in bytes until an Ack
// settles it. Frames that a lost connection leaves unacknowledged are sent
// again on the next one, so delivery is at least once. A [Server] is the
// sidecar's end: it checks the Hello, decodes frames within the SDP limits,
// hands them to a [Handler] one at a time per connection and acknowledges
// each.
//
// A sidecar must read a frame whole, and take what it needs of it, before
// it sends an Ack whose sequence covers that frame. The client forgets a
// frame once it is acknowledged, and may still be writing the frame when
// the Ack arrives: were a sidecar to acknowledge a frame it had read only in
// part and the connection then broke, the frame would be lost. [Server]
// acknowledges a frame only after its [Handler] has returned for it.
//
// Endpoints are written unix:///path/to/socket or tcp://host:port; see
// [ParseEndpoint].
package transport
