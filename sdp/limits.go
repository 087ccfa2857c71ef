// SPDX-License-Identifier: Apache-2.0

package sdp

import (
	"fmt"
	"strconv"
)

// Limits of the otelcol-sdp transport contract. SDP itself admits payloads
// up to MaxValueSize; the transport reads each frame type under a much
// smaller limit, so that a peer cannot make the other end allocate or buffer
// more than the frame type needs. Encoders here do not apply these limits
// (the golden vectors are SDP's); the transport does.
const (
	// MaxHelloFrameSize bounds a Hello frame, header included: a sender of
	// up to MaxHelloSenderSize bytes. A server reads the first frame of a
	// connection under this limit, before it allocates anything larger.
	MaxHelloFrameSize = 4 << 10
	// MaxHelloSenderSize is the longest Hello.Sender that fits
	// MaxHelloFrameSize.
	MaxHelloSenderSize = MaxHelloFrameSize - HeaderSize - helloFixedSize
	// MaxAckFrameSize bounds an Ack frame, header included. A client treats
	// a longer Ack as a protocol error of its sidecar.
	MaxAckFrameSize = 64 << 10
	// MaxAckDetailSize is the longest Ack.Detail that fits MaxAckFrameSize.
	MaxAckDetailSize = MaxAckFrameSize - HeaderSize - ackFixedSize
)

// FrameSizeError reports a frame whose declared size exceeds the limit a
// Reader applies. It matches ErrTooLarge with errors.Is. After it, the
// Reader's stream is positioned right after the frame's header: nothing of
// the payload has been read.
type FrameSizeError struct {
	// Header is the frame's header; Header.Length is the declared payload
	// length.
	Header Header
	// Limit is the maximum frame size that applied, header included.
	Limit int
}

// Size returns the declared size of the frame, header included.
func (e *FrameSizeError) Size() uint64 { return HeaderSize + uint64(e.Header.Length) }

// Error says which frame type was too large and names the limit, e.g.
// "sdp: Ack frame of 70010 bytes exceeds the 65536-byte limit".
func (e *FrameSizeError) Error() string {
	return fmt.Sprintf("sdp: %s frame of %d bytes exceeds the %d-byte limit", TypeName(e.Header.Type), e.Size(), e.Limit)
}

// Is reports whether target is ErrTooLarge.
func (e *FrameSizeError) Is(target error) bool { return target == ErrTooLarge }

// TypeName names a frame type ID: "Hello", "ResourceFrame", "Ack", or
// "type N" for an ID the schema does not define.
func TypeName(typ uint16) string {
	switch typ {
	case TypeHello:
		return "Hello"
	case TypeResourceFrame:
		return "ResourceFrame"
	case TypeAck:
		return "Ack"
	}
	return "type " + strconv.Itoa(int(typ))
}
