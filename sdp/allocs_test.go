// SPDX-License-Identifier: Apache-2.0

package sdp

import (
	"bytes"
	"io"
	"testing"
)

func TestEncodeIntoSizedBufferDoesNotAllocate(t *testing.T) {
	hello := Hello{ProtocolVersion: ProtocolVersion, Sender: "otelcol-sdp/gateway-0", Shard: 3, ShardCount: 8}
	rf := ResourceFrame{Sequence: 1, Signal: 1, OTLP: bytes.Repeat([]byte{1}, 1024)}
	ack := Ack{Sequence: 9, Status: AckRejected, Detail: "schema mismatch: résumé"}
	for name, m := range map[string]frameEncoder{"Hello": &hello, "ResourceFrame": &rf, "Ack": &ack} {
		buf := make([]byte, 0, m.FrameSize())
		if n := testing.AllocsPerRun(100, func() {
			if _, err := m.AppendFrame(buf[:0]); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s.AppendFrame allocates %v times", name, n)
		}
	}
	header := make([]byte, 0, ResourceHeaderSize)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := rf.AppendHeader(header[:0]); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("ResourceFrame.AppendHeader allocates %v times", n)
	}
}

func TestDecodeDoesNotAllocate(t *testing.T) {
	rfPayload := readVector(t, "resource_frame_traces.bin")[HeaderSize:]
	ackPayload := readVector(t, "ack_ok.bin")[HeaderSize:]
	helloPayload := readVector(t, "hello.bin")[HeaderSize:]
	var rf ResourceFrame
	var ack Ack
	hello := Hello{Sender: "otelcol-sdp/gateway-0"}
	cases := map[string]func() error{
		"ResourceFrame":                 func() error { return rf.DecodePayload(rfPayload) },
		"Ack with empty detail":         func() error { return ack.DecodePayload(ackPayload) },
		"Hello repeating a held sender": func() error { return hello.DecodePayload(helloPayload) },
	}
	for name, decode := range cases {
		if n := testing.AllocsPerRun(100, func() {
			if err := decode(); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: DecodePayload allocates %v times", name, n)
		}
	}
}

func TestStreamSteadyStateDoesNotAllocate(t *testing.T) {
	rf := ResourceFrame{Sequence: 1, Signal: 1, OTLP: bytes.Repeat([]byte{1}, 1024)}
	w := NewWriter(io.Discard)
	if n := testing.AllocsPerRun(100, func() {
		if err := w.WriteResourceFrame(&rf); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Writer.WriteResourceFrame allocates %v times", n)
	}

	frame, err := rf.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	src := bytes.NewReader(frame)
	r := NewReader(src, 0)
	var got ResourceFrame
	if n := testing.AllocsPerRun(100, func() {
		src.Reset(frame)
		_, payload, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if err := got.DecodePayload(payload); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Reader.Next + DecodePayload allocates %v times per frame", n)
	}
}
