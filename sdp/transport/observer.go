// SPDX-License-Identifier: Apache-2.0

package transport

import "github.com/otelcol-sdp/otelcol-sdp/sdp"

// Observer learns what a Client does, typically to record metrics. Its
// methods are called from the client's goroutines, so they must be cheap,
// must not block and must be safe for concurrent use. A nil Observer in
// ClientSettings observes nothing.
type Observer interface {
	// FramesSent reports the frames of one write to a connection, so that
	// an Observer that records metrics pays once per write, not per frame.
	FramesSent(shard uint32, sent Sent)
	// AckReceived reports an Ack and how many held frames it settled or,
	// for AckRetry, returned to the queue.
	AckReceived(shard uint32, status sdp.AckStatus, frames int)
	// Connected reports a connection whose Hello was written; reconnect
	// says the client had been connected before.
	Connected(shard uint32, reconnect bool)
	// Disconnected reports a connection attempt that failed or a
	// connection that was lost, with the reason; the client keeps trying.
	// It is not called once the client is shutting down.
	Disconnected(shard uint32, err error)
	// Undelivered reports the frames and items still held when Shutdown
	// gave up.
	Undelivered(shard uint32, frames, items int)
}

// ProtocolObserver is an optional interface of an Observer: a Client whose
// Observer implements it reports sidecars that break the protocol.
type ProtocolObserver interface {
	// ProtocolError reports a connection that ended because the sidecar
	// broke the protocol (an over-long or malformed Ack, an undefined
	// status, an Ack for frames never sent). The client reconnects with
	// growing backoff.
	ProtocolError(shard uint32)
	// FramesFailed reports frames settled as failed, with an error
	// wrapping ErrProtocol, because the sidecar answered them with an Ack
	// over sdp.MaxAckFrameSize.
	FramesFailed(shard uint32, frames, items int)
}

// Sent is what one write to a connection carried.
type Sent struct {
	// Frames, Bytes and Items count the frames written, their encoded
	// bytes and the items in them.
	Frames, Bytes, Items int
	// Retransmissions counts the frames among them that had been handed
	// to a connection before (one that was lost, or before an Ack asked
	// to retry).
	Retransmissions int
}

type nopObserver struct{}

func (nopObserver) FramesSent(uint32, Sent)                {}
func (nopObserver) AckReceived(uint32, sdp.AckStatus, int) {}
func (nopObserver) Connected(uint32, bool)                 {}
func (nopObserver) Disconnected(uint32, error)             {}
func (nopObserver) Undelivered(uint32, int, int)           {}
