// SPDX-License-Identifier: Apache-2.0

package sdp

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"testing/iotest"
)

// refusingReader fails the test if anyone reads past the bytes it holds.
type refusingReader struct {
	t    *testing.T
	data []byte
}

func (r *refusingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		r.t.Error("reader read past the frame header")
		return 0, io.EOF
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReaderRefusesOversizedFrameBeforeAllocating(t *testing.T) {
	header := readVector(t, "huge_declared_length.bin")[:HeaderSize]
	r := NewReader(&refusingReader{t: t, data: header}, 1<<20)
	_, _, err := r.Next()
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Next: %v, want ErrTooLarge", err)
	}
	if cap(r.buf) != 0 {
		t.Errorf("reader allocated %d bytes for a refused frame", cap(r.buf))
	}
	if _, _, again := r.Next(); again != err {
		t.Errorf("second Next: %v, want the sticky %v", again, err)
	}
}

func TestReaderMaxFrameSizeCountsTheHeader(t *testing.T) {
	frame := readVector(t, "hello.bin")
	if _, _, err := NewReader(bytes.NewReader(frame), len(frame)).Next(); err != nil {
		t.Errorf("frame of exactly the maximum: %v", err)
	}
	if _, _, err := NewReader(bytes.NewReader(frame), len(frame)-1).Next(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("frame one byte over the maximum: %v, want ErrTooLarge", err)
	}
}

func TestReaderDefaultsAndClampsMaximum(t *testing.T) {
	if got := NewReader(nil, 0).max; got != DefaultMaxFrameSize {
		t.Errorf("max for 0 = %d, want DefaultMaxFrameSize", got)
	}
	if got := NewReader(nil, 1<<40).max; got != HeaderSize+MaxValueSize {
		t.Errorf("max for 1<<40 = %d, want %d", got, HeaderSize+MaxValueSize)
	}
	if DefaultMaxFrameSize < MaxResourceFrameSize {
		t.Error("the default maximum refuses valid ResourceFrames")
	}
	// A maximum smaller than a header must still be a limit: a declared
	// payload of any size is refused before anything is allocated.
	frame := readVector(t, "resource_frame_traces.bin")
	for _, limit := range []int{1, HeaderSize - 1} {
		r := NewReader(bytes.NewReader(frame), limit)
		if _, _, err := r.Next(); !errors.Is(err, ErrTooLarge) {
			t.Errorf("limit %d: Next = %v, want ErrTooLarge", limit, err)
		}
		if cap(r.buf) != 0 {
			t.Errorf("limit %d: buffer of %d bytes allocated", limit, cap(r.buf))
		}
	}
}

func TestReaderReusesItsBuffer(t *testing.T) {
	frame := readVector(t, "resource_frame_traces.bin")
	stream := bytes.Repeat(frame, 3)
	r := NewReader(iotest.OneByteReader(bytes.NewReader(stream)), 0)
	var first *byte
	for i := range 3 {
		h, payload, err := r.Next()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if h.Type != TypeResourceFrame || !bytes.Equal(payload, frame[HeaderSize:]) {
			t.Fatalf("frame %d: header %+v or payload differs", i, h)
		}
		if i == 0 {
			first = &payload[0]
		} else if &payload[0] != first {
			t.Errorf("frame %d got a new buffer", i)
		}
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Errorf("at the end: %v, want io.EOF", err)
	}
}

func TestReaderStreamEndsInsideFrame(t *testing.T) {
	frame := readVector(t, "ack_rejected.bin")
	for _, n := range []int{1, HeaderSize - 1, HeaderSize, len(frame) - 1} {
		_, _, err := NewReader(bytes.NewReader(frame[:n]), 0).Next()
		if !errors.Is(err, ErrUnexpectedEnd) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("stream of %d bytes: %v, want ErrUnexpectedEnd and io.ErrUnexpectedEOF", n, err)
		}
	}
}

func TestReaderHeaderErrors(t *testing.T) {
	for name, want := range map[string]error{"bad_magic.bin": ErrBadMagic, "bad_version.bin": ErrBadVersion, "unknown_type.bin": ErrUnknownType} {
		if _, _, err := NewReader(bytes.NewReader(readVector(t, name)), 0).Next(); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
}

func TestReaderPassesReadErrors(t *testing.T) {
	boom := errors.New("boom")
	_, _, err := NewReader(iotest.ErrReader(boom), 0).Next()
	if !errors.Is(err, boom) || errors.Is(err, ErrUnexpectedEnd) {
		t.Errorf("Next: %v, want the read error", err)
	}
}

func TestWriterRoundTrip(t *testing.T) {
	var stream bytes.Buffer
	w := NewWriter(&stream)
	hello := Hello{ProtocolVersion: ProtocolVersion, Sender: "gw", Shard: 1, ShardCount: 2}
	frame, err := hello.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame(frame); err != nil {
		t.Fatal(err)
	}
	rf := ResourceFrame{Sequence: 1, Signal: 3, OTLP: []byte("otlp")}
	if err := w.WriteResourceFrame(&rf); err != nil {
		t.Fatal(err)
	}
	r := NewReader(&stream, 0)
	if h, payload, err := r.Next(); err != nil || h.Type != TypeHello || !bytes.Equal(payload, frame[HeaderSize:]) {
		t.Fatalf("first frame: %+v, %v", h, err)
	}
	h, payload, err := r.Next()
	if err != nil || h.Type != TypeResourceFrame {
		t.Fatalf("second frame: %+v, %v", h, err)
	}
	var got ResourceFrame
	if err := got.DecodePayload(payload); err != nil || got.Sequence != 1 || got.Signal != 3 || string(got.OTLP) != "otlp" {
		t.Errorf("second frame decodes to %+v, %v", got, err)
	}
}

func TestWriterRefusesPartialFrames(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	frame := readVector(t, "ack_ok.bin")
	for name, b := range map[string][]byte{
		"cut":        frame[:len(frame)-1],
		"two frames": append(bytes.Clone(frame), frame...),
		"header":     frame[:HeaderSize-1],
	} {
		if err := w.WriteFrame(b); err == nil {
			t.Errorf("%s: WriteFrame accepted it", name)
		}
	}
	if err := w.WriteFrame(readVector(t, "bad_magic.bin")); !errors.Is(err, ErrBadMagic) {
		t.Errorf("bad magic: %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("refused frames wrote %d bytes", out.Len())
	}
	if err := w.WriteResourceFrame(&ResourceFrame{OTLP: make([]byte, MaxArrayLen+1)}); !errors.Is(err, ErrArrayTooLarge) {
		t.Errorf("oversized ResourceFrame: %v", err)
	}
}

func TestWriteResourceFrameToConnection(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	f := ResourceFrame{Sequence: 5, Signal: 1, ResourceHash: 9, ItemCount: 1, OTLP: bytes.Repeat([]byte{0xab}, 4096)}
	want, err := f.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		defer client.Close()
		done <- NewWriter(client).WriteResourceFrame(&f)
	}()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(server, got); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("bytes on the connection differ from AppendFrame")
	}
}

func TestWriterReportsShortWrites(t *testing.T) {
	w := NewWriter(failingWriter{})
	if err := w.WriteFrame(readVector(t, "ack_ok.bin")); !errors.Is(err, io.ErrShortWrite) {
		t.Errorf("WriteFrame: %v", err)
	}
	if err := w.WriteResourceFrame(&ResourceFrame{}); !errors.Is(err, io.ErrShortWrite) {
		t.Errorf("WriteResourceFrame: %v", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrShortWrite }
