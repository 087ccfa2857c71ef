// SPDX-License-Identifier: Apache-2.0

package bufpool

import (
	"testing"
)

func TestClassesCoverEverySizeWithinAnEighth(t *testing.T) {
	if i, _ := class(MinSize - 1); i != -1 {
		t.Fatalf("class(MinSize-1) = %d, want -1", i)
	}
	prev := 0
	for n := MinSize; n <= 1<<20; n++ {
		i, size := class(n)
		if i < 0 {
			t.Fatalf("class(%d) = -1 below MaxSize", n)
		}
		if size < n {
			t.Fatalf("class(%d) holds only %d bytes", n, size)
		}
		if size-n > n/steps {
			t.Fatalf("class(%d) = %d wastes more than an eighth", n, size)
		}
		if i < prev {
			t.Fatalf("class(%d) = %d, below the class of a smaller size (%d)", n, i, prev)
		}
		prev = i
		// A class's own size maps back to that class, so that Put finds it.
		if j, s := class(size); j != i || s != size {
			t.Fatalf("class(%d) = (%d, %d), but class(%d) = (%d, %d)", n, i, size, size, j, s)
		}
	}
	if i, size := class(MaxSize); i != classes-1 || size != MaxSize {
		t.Fatalf("class(MaxSize) = (%d, %d), want (%d, %d)", i, size, classes-1, MaxSize)
	}
	if i, _ := class(MaxSize + 1); i != -1 {
		t.Fatalf("class(MaxSize+1) = %d, want -1", i)
	}
}

func TestGetReturnsTheLengthAskedAndReusesWhatWasPut(t *testing.T) {
	var p Pool
	b := p.Get(11_000)
	if len(b) != 11_000 || cap(b) < 11_000 || cap(b) > 11_000+11_000/8 {
		t.Fatalf("Get(11000): len %d cap %d", len(b), cap(b))
	}
	b[0], b[len(b)-1] = 1, 2
	p.Put(b)
	// sync.Pool may drop what was put (a GC in between); whenever it does
	// hand the buffer back, it must be the same memory, whole.
	for range 100 {
		c := p.Get(10_900)
		if len(c) != 10_900 {
			t.Fatalf("Get(10900): len %d", len(c))
		}
		if cap(c) != cap(b) {
			t.Fatalf("same class, capacities %d and %d", cap(c), cap(b))
		}
		if &c[0] == &b[0] {
			if c[0] != 1 || c[:cap(c)][len(b)-1] != 2 {
				t.Fatal("a reused buffer lost its contents: the pool must not clear")
			}
			return
		}
		p.Put(c)
	}
}

func TestPutDropsBuffersNotOfAClassSize(t *testing.T) {
	var p Pool
	odd := make([]byte, 1000) // 1000 is not a class size (1024 is)
	p.Put(odd)
	for range 100 {
		if b := p.Get(1000); &b[0] == &odd[0] {
			t.Fatal("Get handed out a buffer whose capacity is not its class's")
		}
	}
	small := p.Get(MinSize - 1)
	if len(small) != MinSize-1 || cap(small) != MinSize-1 {
		t.Fatalf("Get below MinSize: len %d cap %d, want exact", len(small), cap(small))
	}
	p.Put(small)
	big := p.Get(MaxSize + 1)
	if len(big) != MaxSize+1 {
		t.Fatalf("Get above MaxSize: len %d", len(big))
	}
	p.Put(big) // must not panic or keep it
}

func TestGetAndPutDoNotAllocateOnceWarm(t *testing.T) {
	var p Pool
	p.Put(p.Get(11_000))
	allocs := testing.AllocsPerRun(1000, func() {
		p.Put(p.Get(11_000))
	})
	// A GC during the run may empty the pool once; more than that means
	// Get or Put allocates by itself.
	if allocs > 0.01 {
		t.Fatalf("Get+Put allocate %.3f times per call", allocs)
	}
}
