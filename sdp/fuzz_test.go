// SPDX-License-Identifier: Apache-2.0

package sdp

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
)

// fuzzMaxFrame is the Reader limit in FuzzDecode, small enough that inputs
// routinely declare more.
const fuzzMaxFrame = 512

// decodeAllocSlack covers the returned message and an error's text; the rest
// of what Decode may allocate is a copy of one string of the input.
const decodeAllocSlack = 4 << 10

var sentinels = []error{ErrUnexpectedEnd, ErrBadMagic, ErrBadVersion, ErrUnknownType, ErrArrayTooLarge, ErrTooManyElements, ErrTooLarge, ErrInvalidData, ErrInvalidUTF8}

func isSentinel(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// FuzzDecode checks that decoding never panics, allocates no more than the
// input justifies, fails only with the package's sentinels, and that every
// frame it accepts re-encodes to the same bytes, through Decode and through
// a Reader. The seed corpus in testdata/fuzz/FuzzDecode holds the golden
// vectors.
func FuzzDecode(f *testing.F) {
	rf := ResourceFrame{Sequence: 1, Signal: 2, Shard: 3, ResourceHash: 4, ItemCount: 5, OTLP: []byte("otlp")}
	frame, err := rf.AppendFrame(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(frame)
	f.Add(append(bytes.Clone(frame), frame...))
	trailing := append(bytes.Clone(frame), 0)
	trailing[6]++ // the declared length covers the trailing byte
	f.Add(trailing)
	ack := Ack{Sequence: 1, Status: AckRetry, Detail: "busy"}
	if frame, err = ack.AppendFrame(nil); err != nil {
		f.Fatal(err)
	}
	f.Add(frame)

	f.Fuzz(func(t *testing.T, data []byte) {
		if allocated := decodeAllocatedBytes(data); allocated > uint64(len(data))+decodeAllocSlack {
			t.Fatalf("Decode of %d bytes allocated %d bytes", len(data), allocated)
		}
		msg, n, err := Decode(data)
		if err != nil {
			if !isSentinel(err) {
				t.Fatalf("Decode error %q matches no sentinel", err)
			}
		} else {
			if n < HeaderSize || n > len(data) {
				t.Fatalf("Decode consumed %d of %d bytes", n, len(data))
			}
			if again := encodeMessage(t, msg); !bytes.Equal(again, data[:n]) {
				t.Fatalf("%T re-encodes to\n% x\nnot\n% x", msg, again, data[:n])
			}
		}

		r := NewReader(bytes.NewReader(data), fuzzMaxFrame)
		for {
			h, payload, err := r.Next()
			if cap(r.buf) > fuzzMaxFrame-HeaderSize {
				t.Fatalf("Reader buffer grew to %d bytes, over its limit", cap(r.buf))
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				if !isSentinel(err) {
					t.Fatalf("Reader error %q matches no sentinel", err)
				}
				break
			}
			var m frameEncoder
			var decodeErr error
			switch h.Type {
			case TypeHello:
				v := new(Hello)
				m, decodeErr = v, v.DecodePayload(payload)
			case TypeResourceFrame:
				v := new(ResourceFrame)
				m, decodeErr = v, v.DecodePayload(payload)
			case TypeAck:
				v := new(Ack)
				m, decodeErr = v, v.DecodePayload(payload)
			default:
				t.Fatalf("Reader returned type %d", h.Type)
			}
			if decodeErr != nil {
				if !isSentinel(decodeErr) {
					t.Fatalf("DecodePayload error %q matches no sentinel", decodeErr)
				}
				continue
			}
			again, err := m.AppendFrame(nil)
			if err != nil {
				t.Fatalf("re-encoding %T: %v", m, err)
			}
			if !bytes.Equal(again[HeaderSize:], payload) || len(payload) != int(h.Length) {
				t.Fatalf("%T payload re-encodes differently", m)
			}
		}
	})
}

// decodeAllocatedBytes measures the bytes one Decode of data allocates.
// runtime.MemStats counts the whole process, so a background allocation (the
// race detector's, the test runner's) can land inside one measurement; such
// noise only ever adds, so the least of a few measurements is Decode's own.
func decodeAllocatedBytes(data []byte) uint64 {
	least := ^uint64(0)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, _ = Decode(data)
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}
