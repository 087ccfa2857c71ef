// SPDX-License-Identifier: Apache-2.0

package shard

// jumpMultiplier is the 64-bit linear congruential generator multiplier used
// by Lamping and Veach; keeping it (and the exact floating point steps below)
// makes Jump agree with every other published jump hash implementation.
const jumpMultiplier = 2862933555777941757

// Jump returns the bucket in [0, buckets) that key belongs to, using the jump
// consistent hash of Lamping and Veach ("A Fast, Minimal Memory, Consistent
// Hash Algorithm", 2014).
//
// Growing buckets from n to n+1 moves only the keys that land in the new
// bucket n, about 1/(n+1) of them; no key moves between old buckets.
// Jump panics if buckets is not positive, like math/rand's Intn, because a
// zero shard count is a configuration error that must be caught earlier.
func Jump(key uint64, buckets int) int {
	if buckets <= 0 {
		panic("shard: Jump called with a non-positive number of buckets")
	}
	// next starts at bucket 0, which every key is in; buckets > 0 above,
	// so the loop runs at least once and sets bucket.
	var bucket, next int64
	for next < int64(buckets) {
		bucket = next
		key = key*jumpMultiplier + 1
		// The top 31 bits of the generator give a uniform draw r in (0, 1];
		// the next bucket at which key would move is (bucket+1)/r.
		next = int64(float64(bucket+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(bucket)
}
