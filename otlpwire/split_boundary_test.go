// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

// A chunk whose resource is exactly 128 bytes is the first one whose length
// prefix takes two varint bytes (0x80 0x01). SplitResource writes that prefix
// into room it reserved before knowing the chunk's size, so this is where a
// wrong length would first show: the chunk would claim another length than
// the bytes it carries and a receiver would refuse it or read less.
func TestSplitChunkOfA128ByteResource(t *testing.T) {
	// One span per chunk, named so that the chunk's ResourceSpans is 128
	// bytes: the request is then 1 (tag) + 2 (length) + 128 = 131 bytes.
	span := func(p *pb, first byte, pad int) {
		id := make([]byte, 16)
		id[0] = first
		p.bytes(1, id)
		p.str(5, strings.Repeat("s", pad))
	}
	chunkOf := func(first byte, pad int) []byte {
		var p pb
		p.msg(1, func(p *pb) {
			p.msg(2, func(p *pb) {
				p.msg(2, func(p *pb) { span(p, first, pad) })
			})
		})
		return p.b
	}
	pad := -1
	for n := range 200 {
		if len(chunkOf(1, n)) == 3+128 {
			pad = n
			break
		}
	}
	if pad < 0 {
		t.Fatal("no span name gives a 128-byte resource")
	}
	want := [][]byte{chunkOf(1, pad), chunkOf(2, pad)}
	for _, w := range want {
		if !bytes.HasPrefix(w, []byte{0x0a, 0x80, 0x01}) {
			t.Fatalf("expected chunk starts % x, want 0a 80 01", w[:3])
		}
	}

	var whole pb
	whole.msg(1, func(p *pb) {
		p.msg(2, func(p *pb) {
			p.msg(2, func(p *pb) { span(p, 1, pad) })
			p.msg(2, func(p *pb) { span(p, 2, pad) })
		})
	})

	for rd := range NewRequest(SignalTraces, whole.b).Resources() {
		var got [][]byte
		for chunk, err := range SplitResource(rd, 131, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if chunk.ItemCount != 1 {
				t.Errorf("chunk %d holds %d spans, want 1", len(got), chunk.ItemCount)
			}
			// The chunk must read back as a request of one resource with
			// one span, through the module's own reader.
			n, err := NewRequest(SignalTraces, chunk.Request).ItemCount()
			if err != nil || n != 1 {
				t.Errorf("chunk %d reads back as %d spans (%v), want 1", len(got), n, err)
			}
			got = append(got, slices.Clone(chunk.Request))
		}
		if len(got) != len(want) {
			t.Fatalf("%d chunks, want %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("chunk %d\n got % x\nwant % x", i, got[i], want[i])
			}
		}

		// One byte less and a single span no longer fits.
		var last error
		for _, err := range SplitResource(rd, 130, nil) {
			last = err
		}
		if !errors.Is(last, ErrItemTooLarge) {
			t.Errorf("limit 130: %v, want ErrItemTooLarge", last)
		}
	}
}
