// SPDX-License-Identifier: Apache-2.0

package sdp

import (
	"bytes"
	"io"
	"strconv"
	"testing"
)

// benchPayloads are the OTLP sizes of the ResourceFrame benchmarks; the last
// is the largest a frame may carry.
var benchPayloads = []int{1 << 10, 100 << 10, MaxArrayLen}

func benchName(size int) string {
	switch {
	case size == MaxArrayLen:
		return "1000000B"
	case size%(1<<10) == 0:
		return strconv.Itoa(size>>10) + "KB"
	}
	return strconv.Itoa(size) + "B"
}

func benchFrame(size int) ResourceFrame {
	return ResourceFrame{Sequence: 1, Signal: 1, Shard: 3, ResourceHash: 0x9e3779b97f4a7c15, ItemCount: 10, OTLP: bytes.Repeat([]byte{0x0a}, size)}
}

func BenchmarkResourceFrameEncode(b *testing.B) {
	for _, size := range benchPayloads {
		b.Run(benchName(size), func(b *testing.B) {
			f := benchFrame(size)
			buf := make([]byte, 0, f.FrameSize())
			b.SetBytes(int64(f.FrameSize()))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = f.AppendFrame(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkResourceFrameDecode(b *testing.B) {
	for _, size := range benchPayloads {
		b.Run(benchName(size), func(b *testing.B) {
			f := benchFrame(size)
			frame, err := f.AppendFrame(nil)
			if err != nil {
				b.Fatal(err)
			}
			var got ResourceFrame
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if err := got.DecodePayload(frame[HeaderSize:]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkResourceFrameWrite measures the zero-copy write path, header then
// payload, against a sink that does no work.
func BenchmarkResourceFrameWrite(b *testing.B) {
	for _, size := range benchPayloads {
		b.Run(benchName(size), func(b *testing.B) {
			f := benchFrame(size)
			w := NewWriter(io.Discard)
			b.SetBytes(int64(f.FrameSize()))
			b.ReportAllocs()
			for b.Loop() {
				if err := w.WriteResourceFrame(&f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReaderNext reads ResourceFrames from a stream and decodes them.
func BenchmarkReaderNext(b *testing.B) {
	for _, size := range benchPayloads {
		b.Run(benchName(size), func(b *testing.B) {
			f := benchFrame(size)
			frame, err := f.AppendFrame(nil)
			if err != nil {
				b.Fatal(err)
			}
			src := bytes.NewReader(frame)
			r := NewReader(src, 0)
			var got ResourceFrame
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				src.Reset(frame)
				_, payload, err := r.Next()
				if err != nil {
					b.Fatal(err)
				}
				if err := got.DecodePayload(payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
