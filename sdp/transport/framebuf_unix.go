// SPDX-License-Identifier: Apache-2.0

//go:build unix

package transport

import "syscall"

// frameBuf is the space a server connection reads frame payloads into: an
// anonymous private mapping as large as the biggest payload allowed. The
// mapping costs address space only; a page becomes resident when a byte
// that arrived is written to it, so a frame that declares a large length
// and sends little holds little. release hands the pages of a finished
// frame back to the kernel at once, and free unmaps everything, so memory
// goes back to the system when a peer leaves, without waiting for a
// garbage collection.
type frameBuf struct {
	b []byte
}

func newFrameBuf(size int) (*frameBuf, error) {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	return &frameBuf{b: b}, nil
}

// bytes returns the first n bytes of the space, n at most its size.
func (f *frameBuf) bytes(n int) []byte { return f.b[:n:n] }

// release drops the pages of b[from:to] from memory; they read as zeros
// when touched again.
func (f *frameBuf) release(from, to int) {
	from = pageUp(from)
	if to <= from {
		return
	}
	f.dropPages(from, to)
}

func (f *frameBuf) free() {
	if f.b != nil {
		_ = syscall.Munmap(f.b)
		f.b = nil
	}
}

// pageUp rounds n up to a multiple of the page size.
func pageUp(n int) int {
	p := syscall.Getpagesize()
	return (n + p - 1) / p * p
}
