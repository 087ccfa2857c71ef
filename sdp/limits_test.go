// SPDX-License-Identifier: Apache-2.0

package sdp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestFrameSizeErrorNamesTypeAndLimit(t *testing.T) {
	ack := Ack{Sequence: 1, Status: AckRejected, Detail: strings.Repeat("d", MaxAckDetailSize+1)}
	frame, err := ack.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = NewReader(bytes.NewReader(frame), MaxAckFrameSize).Next()
	var fse *FrameSizeError
	if !errors.As(err, &fse) || !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Next: %v, want a *FrameSizeError matching ErrTooLarge", err)
	}
	if fse.Header.Type != TypeAck || fse.Size() != uint64(len(frame)) || fse.Limit != MaxAckFrameSize {
		t.Errorf("error fields %+v size %d", fse, fse.Size())
	}
	want := "sdp: Ack frame of 65537 bytes exceeds the 65536-byte limit"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	// One byte less fits exactly.
	ack.Detail = ack.Detail[1:]
	frame, _ = ack.AppendFrame(nil)
	if len(frame) != MaxAckFrameSize {
		t.Fatalf("frame of %d bytes", len(frame))
	}
	if _, _, err := NewReader(bytes.NewReader(frame), MaxAckFrameSize).Next(); err != nil {
		t.Errorf("Ack of exactly MaxAckFrameSize: %v", err)
	}
}

func TestHelloLimitFitsTheLongestSender(t *testing.T) {
	h := Hello{ProtocolVersion: ProtocolVersion, Sender: strings.Repeat("s", MaxHelloSenderSize)}
	if h.FrameSize() != MaxHelloFrameSize {
		t.Errorf("Hello with the longest sender is %d bytes, want %d", h.FrameSize(), MaxHelloFrameSize)
	}
}

// trickleReader serves a header declaring a large payload, then only some
// of the payload bytes.
type trickleReader struct{ data []byte }

func (r *trickleReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReaderGrowsWithArrivingBytesNotDeclaredLength(t *testing.T) {
	header := []byte{'S', 'D', 'P', '2', byte(TypeResourceFrame), 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(header[6:], 2<<20-HeaderSize)
	r := NewReader(&trickleReader{data: append(header, make([]byte, 1000)...)}, 2<<20)
	_, _, err := r.Next()
	if !errors.Is(err, ErrUnexpectedEnd) {
		t.Fatalf("Next: %v, want ErrUnexpectedEnd", err)
	}
	if cap(r.buf) > growChunk {
		t.Errorf("reader holds %d bytes after 1000 of a declared 2 MiB arrived, want at most %d", cap(r.buf), growChunk)
	}

	// A whole large frame still decodes, and the buffer is reused.
	f := ResourceFrame{Sequence: 1, Signal: 1, OTLP: bytes.Repeat([]byte{7}, 900_000)}
	frame, err := f.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	r = NewReader(bytes.NewReader(append(bytes.Clone(frame), frame...)), 0)
	for i := range 2 {
		_, payload, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		var got ResourceFrame
		if err := got.DecodePayload(payload); err != nil || !bytes.Equal(got.OTLP, f.OTLP) {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	if cap(r.buf) > DefaultMaxFrameSize-HeaderSize {
		t.Errorf("buffer of %d bytes, over the limit", cap(r.buf))
	}
}
