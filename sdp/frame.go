// SPDX-License-Identifier: Apache-2.0

package sdp

import (
	"encoding/binary"
	"fmt"
)

// Type IDs: a struct's 1-based position in otlp_frames.sdp.
const (
	// TypeHello identifies a Hello frame.
	TypeHello uint16 = 1
	// TypeResourceFrame identifies a ResourceFrame frame.
	TypeResourceFrame uint16 = 2
	// TypeAck identifies an Ack frame.
	TypeAck uint16 = 3
)

// Limits shared with the reference decoders.
const (
	// HeaderSize is the size of a message-mode frame header.
	HeaderSize = 10
	// MaxArrayLen bounds the element count of any one array, so a
	// ResourceFrame carries at most MaxArrayLen OTLP bytes.
	MaxArrayLen = 1_000_000
	// MaxTotalElements bounds the elements of all arrays in one decode.
	MaxTotalElements = 10_000_000
	// MaxValueSize bounds an encoded payload.
	MaxValueSize = 128 << 20
)

// ProtocolVersion is the value of Hello.ProtocolVersion for this schema.
const ProtocolVersion uint16 = 1

// frameVersion is the message-mode version byte, ASCII '2'.
const frameVersion = '2'

// Header is the decoded header of a message-mode frame.
type Header struct {
	// Type is the type ID: TypeHello, TypeResourceFrame or TypeAck.
	Type uint16
	// Length is the payload length in bytes, excluding the header.
	Length uint32
}

// ParseHeader parses the frame header at the start of b. It checks the magic,
// the version and the type ID but not the length, which the caller checks
// against the bytes it holds or the limit it accepts.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: frame header needs %d bytes, have %d", ErrUnexpectedEnd, HeaderSize, len(b))
	}
	if b[0] != 'S' || b[1] != 'D' || b[2] != 'P' {
		return Header{}, ErrBadMagic
	}
	if b[3] != frameVersion {
		return Header{}, fmt.Errorf("%w: version byte %#x", ErrBadVersion, b[3])
	}
	h := Header{
		Type:   binary.LittleEndian.Uint16(b[4:]),
		Length: binary.LittleEndian.Uint32(b[6:]),
	}
	if h.Type < TypeHello || h.Type > TypeAck {
		return Header{}, fmt.Errorf("%w: %d", ErrUnknownType, h.Type)
	}
	return h, nil
}

// appendHeader appends a frame header; the caller has checked length against
// MaxValueSize.
func appendHeader(dst []byte, typ uint16, length int) []byte {
	dst = append(dst, 'S', 'D', 'P', frameVersion)
	dst = binary.LittleEndian.AppendUint16(dst, typ)
	return binary.LittleEndian.AppendUint32(dst, uint32(length))
}

// Decode decodes the frame at the start of frame and returns a *Hello, a
// *ResourceFrame or an *Ack, and n, the frame's size: bytes after it belong
// to the next frame. A decoded ResourceFrame's OTLP aliases frame.
//
// Decode allocates the returned message (and a copy of its string); decode
// into a reused value with DecodePayload where that matters.
func Decode(frame []byte) (msg any, n int, err error) {
	h, payload, err := splitFrame(frame)
	if err != nil {
		return nil, 0, err
	}
	switch h.Type {
	case TypeHello:
		m := new(Hello)
		err, msg = m.DecodePayload(payload), m
	case TypeResourceFrame:
		m := new(ResourceFrame)
		err, msg = m.DecodePayload(payload), m
	default: // TypeAck: ParseHeader admits no other type.
		m := new(Ack)
		err, msg = m.DecodePayload(payload), m
	}
	if err != nil {
		return nil, 0, err
	}
	return msg, HeaderSize + len(payload), nil
}

// splitFrame parses the header of frame and returns its payload.
func splitFrame(frame []byte) (Header, []byte, error) {
	h, err := ParseHeader(frame)
	if err != nil {
		return Header{}, nil, err
	}
	if uint64(h.Length) > uint64(len(frame)-HeaderSize) {
		return Header{}, nil, fmt.Errorf("%w: payload length %d, have %d bytes", ErrUnexpectedEnd, h.Length, len(frame)-HeaderSize)
	}
	if h.Length > MaxValueSize {
		return Header{}, nil, fmt.Errorf("%w: payload length %d", ErrTooLarge, h.Length)
	}
	return h, frame[HeaderSize : HeaderSize+int(h.Length)], nil
}

// resourceFrameHeader checks that frame starts with a ResourceFrame holding
// at least its sequence field.
func resourceFrameHeader(frame []byte) error {
	h, err := ParseHeader(frame)
	if err != nil {
		return err
	}
	if h.Type != TypeResourceFrame {
		return fmt.Errorf("%w: frame type %d is not a ResourceFrame", ErrInvalidData, h.Type)
	}
	if h.Length < resourceFixedSize || len(frame) < HeaderSize+resourceFixedSize {
		return fmt.Errorf("%w: ResourceFrame shorter than its fixed fields", ErrUnexpectedEnd)
	}
	return nil
}

// SetSequence rewrites, in place, the sequence of the encoded ResourceFrame
// at the start of frame. The transport stamps sequences when it sends, so
// frames can be encoded before their connection is known.
func SetSequence(frame []byte, seq uint64) error {
	if err := resourceFrameHeader(frame); err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(frame[HeaderSize:], seq)
	return nil
}

// Sequence returns the sequence of the encoded ResourceFrame at the start of
// frame.
func Sequence(frame []byte) (uint64, error) {
	if err := resourceFrameHeader(frame); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(frame[HeaderSize:]), nil
}

// resourceShardOffset is where a ResourceFrame's shard field starts: after
// the header, the sequence (u64) and the signal (u8).
const resourceShardOffset = HeaderSize + 8 + 1

// SetShard rewrites, in place, the shard of the encoded ResourceFrame at the
// start of frame. The transport stamps the shard of the connection a frame
// is sent on, so a frame routed to one member and later assigned to another
// (because the first left the fleet) still matches its connection's Hello.
func SetShard(frame []byte, shard uint32) error {
	if err := resourceFrameHeader(frame); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(frame[resourceShardOffset:], shard)
	return nil
}
