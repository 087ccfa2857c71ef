// SPDX-License-Identifier: Apache-2.0

package transport

import "syscall"

// dropPages frees the pages of b[from:to] at once: MADV_DONTNEED on a
// private anonymous mapping. Should it fail, the pages stay resident until
// the connection closes, which costs memory but never correctness.
func (f *frameBuf) dropPages(from, to int) {
	_ = syscall.Madvise(f.b[from:to], syscall.MADV_DONTNEED)
}
