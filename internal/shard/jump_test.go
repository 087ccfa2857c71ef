// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"math/rand/v2"
	"testing"
)

// Vectors published with other jump hash implementations (they agree with
// the reference C++ code of the paper); matching them shows Jump is the same
// function, not merely a consistent one.
func TestJumpMatchesPublishedVectors(t *testing.T) {
	vectors := []struct {
		key     uint64
		buckets int
		want    int
	}{
		{10863919174838991, 11, 6},
		{2016238256797177309, 11, 3},
		{1673758223894951030, 11, 5},
	}
	for _, v := range vectors {
		if got := Jump(v.key, v.buckets); got != v.want {
			t.Errorf("Jump(%d, %d) = %d, want %d", v.key, v.buckets, got, v.want)
		}
	}
}

// TestJumpGolden pins assignments so that a change to Jump, which would move
// every deployed resource to another sidecar, cannot go unnoticed.
func TestJumpGolden(t *testing.T) {
	keys := []uint64{0, 1, 2, 42, 0xdeadbeef, 1 << 63, ^uint64(0)}
	golden := map[int][]int{
		1:    {0, 0, 0, 0, 0, 0, 0},
		2:    {0, 0, 0, 1, 1, 1, 1},
		8:    {0, 6, 6, 2, 5, 5, 7},
		100:  {0, 55, 62, 43, 87, 84, 92},
		1000: {0, 549, 338, 571, 285, 453, 313},
	}
	for buckets, want := range golden {
		for i, key := range keys {
			if got := Jump(key, buckets); got != want[i] {
				t.Errorf("Jump(%#x, %d) = %d, want %d", key, buckets, got, want[i])
			}
		}
	}
}

func TestJumpStaysInRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		key, buckets := rng.Uint64(), 1+rng.IntN(5000)
		if got := Jump(key, buckets); got < 0 || got >= buckets {
			t.Fatalf("Jump(%#x, %d) = %d, outside [0, %d)", key, buckets, got, buckets)
		}
	}
}

// TestJumpMovesAboutOneOverNPlusOne checks the property the processor relies
// on when an operator adds a sidecar: going from n to n+1 shards moves about
// 1/(n+1) of the keys, all of them to the new shard.
func TestJumpMovesAboutOneOverNPlusOne(t *testing.T) {
	const keyCount = 200_000
	rng := rand.New(rand.NewPCG(3, 4))
	keys := make([]uint64, keyCount)
	for i := range keys {
		keys[i] = rng.Uint64()
	}
	for _, n := range []int{1, 2, 3, 7, 16, 100} {
		moved := 0
		for _, key := range keys {
			before, after := Jump(key, n), Jump(key, n+1)
			if before == after {
				continue
			}
			if after != n {
				t.Fatalf("n=%d: key %#x moved from shard %d to old shard %d", n, key, before, after)
			}
			moved++
		}
		got := float64(moved) / keyCount
		want := 1 / float64(n+1)
		// 200k keys give a standard error well under 0.3% of the key space;
		// allow 10% relative error so the test is not flaky.
		if got < want*0.9 || got > want*1.1 {
			t.Errorf("n=%d -> %d: moved %.4f of keys, want about %.4f", n, n+1, got, want)
		} else {
			t.Logf("n=%d -> %d: moved %.4f of keys (ideal %.4f)", n, n+1, got, want)
		}
	}
}

func TestJumpBalancesKeys(t *testing.T) {
	const buckets, keyCount = 10, 100_000
	rng := rand.New(rand.NewPCG(5, 6))
	counts := make([]int, buckets)
	for range keyCount {
		counts[Jump(rng.Uint64(), buckets)]++
	}
	for b, c := range counts {
		if c < keyCount/buckets*9/10 || c > keyCount/buckets*11/10 {
			t.Errorf("bucket %d holds %d keys, want about %d", b, c, keyCount/buckets)
		}
	}
}

func TestJumpPanicsWithoutBuckets(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Jump(1, 0) did not panic")
		}
	}()
	Jump(1, 0)
}

func BenchmarkJump(b *testing.B) {
	var sink int
	for i := range b.N {
		sink += Jump(uint64(i)*0x9e3779b97f4a7c15, 64)
	}
	_ = sink
}
