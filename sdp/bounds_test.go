// SPDX-License-Identifier: Apache-2.0

package sdp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// A payload of exactly MaxValueSize bytes is within the limit: Decode and
// DecodePayload read it and refuse it for what it holds (here zeros after a
// complete Hello, so trailing bytes), not for its size. One byte more is
// ErrTooLarge (TestDecodePayloadRejectsOversizedPayload,
// TestDecodeRejectsDeclaredLengthOverLimit).
func TestDecodeAtMaxValueSize(t *testing.T) {
	frame := make([]byte, HeaderSize+MaxValueSize)
	copy(frame, "SDP2")
	binary.LittleEndian.PutUint16(frame[4:], TypeHello)
	binary.LittleEndian.PutUint32(frame[6:], MaxValueSize)
	// A zero Hello: version 0, empty sender, shard 0, shard count 0.
	trailing := MaxValueSize - helloFixedSize
	want := "sdp: invalid or corrupted data: " + strconv.Itoa(trailing) + " trailing bytes after Hello"

	_, _, err := Decode(frame)
	if !errors.Is(err, ErrInvalidData) || err.Error() != want {
		t.Errorf("Decode of a Hello frame with a %d-byte payload: %v, want %q", MaxValueSize, err, want)
	}
	var h Hello
	if err := h.DecodePayload(frame[HeaderSize:]); !errors.Is(err, ErrInvalidData) || err.Error() != want {
		t.Errorf("DecodePayload of %d bytes: %v, want %q", MaxValueSize, err, want)
	}
}

// A str may declare up to MaxValueSize bytes: a longer count is refused as
// too large before any byte is looked at, a count of exactly MaxValueSize is
// read, and here runs past the payload's end.
func TestDecodeStrCountAtMaxValueSize(t *testing.T) {
	for _, tt := range []struct {
		count uint32
		want  error
	}{
		{MaxValueSize, ErrUnexpectedEnd},
		{MaxValueSize + 1, ErrTooLarge},
	} {
		payload := binary.LittleEndian.AppendUint16(nil, ProtocolVersion)
		payload = binary.LittleEndian.AppendUint32(payload, tt.count)
		payload = append(payload, "abc"...)
		var h Hello
		if err := h.DecodePayload(payload); !errors.Is(err, tt.want) {
			t.Errorf("Hello.sender declaring %d bytes: %v, want %v", tt.count, err, tt.want)
		}
	}
}

// The encoder accepts exactly what the decoder accepts: an Ack whose payload
// is MaxValueSize bytes encodes and round-trips; the byte more is refused
// (TestEncodeRefusesWhatDecodersReject).
func TestEncodeAckOfMaxValueSize(t *testing.T) {
	a := Ack{Sequence: 9, Status: AckRejected, Detail: strings.Repeat("d", MaxValueSize-ackFixedSize)}
	frame, err := a.AppendFrame(nil)
	if err != nil {
		t.Fatalf("Ack with a %d-byte payload: %v", MaxValueSize, err)
	}
	if len(frame) != HeaderSize+MaxValueSize || a.FrameSize() != len(frame) {
		t.Fatalf("frame of %d bytes (FrameSize %d), want %d", len(frame), a.FrameSize(), HeaderSize+MaxValueSize)
	}
	msg, n, err := Decode(frame)
	if err != nil || n != len(frame) {
		t.Fatalf("Decode: n=%d, %v", n, err)
	}
	if got := msg.(*Ack); got.Sequence != 9 || got.Status != AckRejected || got.Detail != a.Detail {
		t.Error("the largest Ack does not round-trip")
	}
}

// The encoder judges a str as the decoder does: MaxValueSize bytes is a str
// length the decoder reads (TestDecodeStrCountAtMaxValueSize), so a sender
// of that length is refused for invalid UTF-8, its own fault, and for size
// only as part of a payload over MaxValueSize.
func TestEncodeStrOfMaxValueSize(t *testing.T) {
	bad := strings.Repeat("s", MaxValueSize-1) + "\xff"
	if _, err := (&Hello{Sender: bad}).AppendFrame(nil); !errors.Is(err, ErrInvalidUTF8) {
		t.Errorf("Hello.sender of %d bytes, invalid UTF-8: %v, want ErrInvalidUTF8", len(bad), err)
	}
	good := bad[:len(bad)-1] + "s"
	_, err := (&Hello{Sender: good}).AppendFrame(nil)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "Hello payload of") {
		t.Errorf("Hello.sender of %d bytes: %v, want ErrTooLarge for the payload", len(good), err)
	}
}

// The errors name what was short and by how much, so that a peer's bug can
// be read off the log.
func TestDecodeErrorsGiveOffsetsAndLengths(t *testing.T) {
	hello, err := (&Hello{ProtocolVersion: ProtocolVersion, Sender: "s", Shard: 1, ShardCount: 2}).AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	// A frame whose header declares more payload than the buffer holds.
	if _, _, err := Decode(hello[:HeaderSize+3]); err == nil ||
		err.Error() != "sdp: unexpected end of data: payload length 15, have 3 bytes" {
		t.Errorf("Decode of a cut frame: %v", err)
	}
	// A payload cut inside the sender's count: 2 bytes of version read,
	// the count needs 4 at offset 2 and 1 is left.
	var h Hello
	if err := h.DecodePayload(hello[HeaderSize : HeaderSize+3]); err == nil ||
		err.Error() != "sdp: unexpected end of data: Hello.sender needs 4 bytes at offset 2, have 1" {
		t.Errorf("DecodePayload of a cut payload: %v", err)
	}
	// Two bytes after a whole Ack.
	ack, err := (&Ack{Sequence: 1, Detail: "x"}).AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	var a Ack
	if err := a.DecodePayload(append(bytes.Clone(ack[HeaderSize:]), 0, 0)); err == nil ||
		err.Error() != "sdp: invalid or corrupted data: 2 trailing bytes after Ack" {
		t.Errorf("DecodePayload with trailing bytes: %v", err)
	}
	// A Writer given a buffer that is not one whole frame.
	w := NewWriter(io.Discard)
	if err := w.WriteFrame(ack[:len(ack)-1]); !errors.Is(err, ErrInvalidData) ||
		err.Error() != "sdp: invalid or corrupted data: buffer of 23 bytes holds a frame of 24" {
		t.Errorf("WriteFrame of a cut frame: %v", err)
	}
}

func TestTypeName(t *testing.T) {
	for typ, want := range map[uint16]string{
		TypeHello: "Hello", TypeResourceFrame: "ResourceFrame", TypeAck: "Ack",
		0: "type 0", 4: "type 4", 65535: "type 65535",
	} {
		if got := TypeName(typ); got != want {
			t.Errorf("TypeName(%d) = %q, want %q", typ, got, want)
		}
	}
}
