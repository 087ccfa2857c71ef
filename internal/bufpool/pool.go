// SPDX-License-Identifier: Apache-2.0

// Package bufpool is a pool of byte buffers in size classes, for memory
// that is written whole before it is read: unlike a pool that hands out
// cleared buffers, it never spends a pass over the bytes on zeroing them.
package bufpool

import (
	"math/bits"
	"sync"
	"unsafe"
)

const (
	// MinSize is the smallest class, and MaxSize the largest: smaller and
	// larger buffers are allocated without the pool, at their exact size,
	// and dropped when put back. Below MinSize the Go allocator's own
	// classes waste less than a pooled class would, and the zeroing saved
	// is small.
	MinSize = 1 << minShift
	MaxSize = 1 << maxShift

	minShift = 9  // 512 B
	maxShift = 25 // 32 MiB, above the largest SDP frame
	// steps is the number of classes per doubling: a buffer's capacity
	// exceeds the size asked for by at most 1/steps of it, the bound the
	// Go allocator keeps for its own size classes (which may round the
	// class up once more: the memory a buffer holds can be up to a quarter
	// above the size asked for).
	steps     = 8
	stepShift = 3
	classes   = 1 + (maxShift-minShift)*steps
)

// Pool hands out buffers by size class. The zero Pool is ready to use; a
// Pool must not be copied after first use.
type Pool struct {
	// Each class holds pointers to the first byte of buffers of exactly
	// that class's capacity: an unsafe.Pointer fits in an interface
	// without an allocation, where a slice would need one per Put.
	classes [classes]sync.Pool
}

// class returns the index and capacity of the smallest class that holds n
// bytes, or -1 when n is outside [MinSize, MaxSize].
func class(n int) (int, int) {
	if n < MinSize || n > MaxSize {
		return -1, 0
	}
	if n == MinSize {
		return 0, MinSize
	}
	shift := bits.Len(uint(n-1)) - 1 // 1<<shift < n <= 2<<shift
	base := 1 << shift
	step := base >> stepShift
	j := (n - base + step - 1) / step // 1..steps
	return 1 + (shift-minShift)*steps + j - 1, base + j*step
}

// Get returns a buffer of length n whose contents are unspecified. Its
// capacity is n's class size, at most n + n/8.
func (p *Pool) Get(n int) []byte {
	i, size := class(n)
	if i < 0 {
		return make([]byte, n)
	}
	if v := p.classes[i].Get(); v != nil {
		return unsafe.Slice((*byte)(v.(unsafe.Pointer)), size)[:n]
	}
	return make([]byte, n, size)
}

// Put gives b back for reuse: nothing may read or write b afterwards. b
// must be a buffer from Get, or a reslice of one that starts at its first
// byte: Put can check only the capacity, and leaves a buffer whose
// capacity is not a class size to the garbage collector.
func (p *Pool) Put(b []byte) {
	i, size := class(cap(b))
	if i < 0 || size != cap(b) {
		return
	}
	p.classes[i].Put(unsafe.Pointer(unsafe.SliceData(b[:cap(b)])))
}
