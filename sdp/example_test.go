// SPDX-License-Identifier: Apache-2.0

package sdp_test

import (
	"bytes"
	"fmt"
	"io"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// A frame is appended to a buffer and decoded back from it.
func ExampleResourceFrame_AppendFrame() {
	f := sdp.ResourceFrame{Sequence: 1, Signal: 1, Shard: 2, ResourceHash: 0xfeed, ItemCount: 3, OTLP: []byte("otlp bytes")}
	frame, err := f.AppendFrame(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(frame) == f.FrameSize())

	msg, n, err := sdp.Decode(frame)
	if err != nil {
		fmt.Println(err)
		return
	}
	got := msg.(*sdp.ResourceFrame)
	fmt.Println(n, got.Sequence, got.Shard, got.ItemCount, string(got.OTLP))
	// Output:
	// true
	// 49 1 2 3 otlp bytes
}

// A Reader splits a stream into frames; the payloads decode with the
// messages' DecodePayload.
func ExampleReader_Next() {
	var stream []byte
	hello := sdp.Hello{ProtocolVersion: sdp.ProtocolVersion, Sender: "collector-0", Shard: 0, ShardCount: 2}
	stream, _ = hello.AppendFrame(stream)
	ack := sdp.Ack{Sequence: 7, Status: sdp.AckRetry, Detail: "busy"}
	stream, _ = ack.AppendFrame(stream)

	r := sdp.NewReader(bytes.NewReader(stream), 0)
	for {
		h, payload, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		switch h.Type {
		case sdp.TypeHello:
			var m sdp.Hello
			if err := m.DecodePayload(payload); err == nil {
				fmt.Printf("Hello from %s, shard %d of %d\n", m.Sender, m.Shard, m.ShardCount)
			}
		case sdp.TypeAck:
			var m sdp.Ack
			if err := m.DecodePayload(payload); err == nil {
				fmt.Printf("Ack %d: %v (%s)\n", m.Sequence, m.Status, m.Detail)
			}
		}
	}
	// Output:
	// Hello from collector-0, shard 0 of 2
	// Ack 7: retry (busy)
}
