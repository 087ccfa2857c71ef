// SPDX-License-Identifier: Apache-2.0

//go:build unix && !linux

package transport

import "syscall"

// dropPages frees the pages of b[from:to] by replacing the whole mapping
// with a fresh one (the syscall package offers madvise only on Linux); the
// frame it held has been handled, so nothing in it is needed. Should the
// new mapping fail, the old one stays, which costs memory but never
// correctness.
func (f *frameBuf) dropPages(from, to int) {
	b, err := syscall.Mmap(-1, 0, len(f.b), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return
	}
	_ = syscall.Munmap(f.b)
	f.b = b
}
