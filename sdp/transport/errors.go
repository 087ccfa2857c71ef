// SPDX-License-Identifier: Apache-2.0

package transport

import "errors"

var (
	// ErrQueueFull reports frames that do not fit the client's queue right
	// now. It is retryable: the queue drains as the sidecar acknowledges.
	ErrQueueFull = errors.New("transport: sidecar queue full")
	// ErrClosed reports a Send after Shutdown began.
	ErrClosed = errors.New("transport: client closed")
	// ErrRejected reports frames that the sidecar refused for good (Ack
	// status 2); the error text carries the sidecar's detail.
	ErrRejected = errors.New("transport: rejected by sidecar")
	// ErrUndelivered reports frames still unacknowledged when Shutdown's
	// context ended.
	ErrUndelivered = errors.New("transport: frames undelivered at shutdown")
	// ErrInvalidEndpoint reports an endpoint that is not unix:///path or
	// tcp://host:port.
	ErrInvalidEndpoint = errors.New("transport: invalid endpoint")
	// ErrInvalidFrame reports a Frame whose bytes are not one complete
	// encoded ResourceFrame.
	ErrInvalidFrame = errors.New("transport: invalid frame")
	// ErrExceedsQueue reports frames given to one Send that together are
	// larger than the whole queue: they can never fit, so retrying is
	// pointless.
	ErrExceedsQueue = errors.New("transport: frames larger than the queue")
	// ErrProtocol reports a sidecar that broke the protocol, such as an
	// Ack over sdp.MaxAckFrameSize; frames settled with it were answered
	// by such an Ack and are not sent again by the client.
	ErrProtocol = errors.New("transport: sidecar protocol error")
	// ErrServerClosed is returned by Server.Serve after Shutdown.
	ErrServerClosed = errors.New("transport: server closed")
)
