// SPDX-License-Identifier: Apache-2.0

//go:build !unix

package transport

// frameBuf is the space a server connection reads frame payloads into.
// Without mmap it is a heap slice that grows in readStep steps as bytes
// arrive and is dropped after a frame larger than freeAllowance, so a
// partial frame holds what it received plus at most one step; memory goes
// back to the system after a garbage collection.
type frameBuf struct {
	size int
	b    []byte
}

func newFrameBuf(size int) (*frameBuf, error) { return &frameBuf{size: size}, nil }

func (f *frameBuf) bytes(n int) []byte {
	if n > cap(f.b) {
		grown := make([]byte, min(max(n, len(f.b)+readStep), f.size))
		copy(grown, f.b)
		f.b = grown
	}
	return f.b[:n:n]
}

func (f *frameBuf) release(from, to int) {
	if cap(f.b) > from {
		f.b = nil
	}
}

func (f *frameBuf) free() { f.b = nil }
