// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"errors"
	"hash/fnv"
	"slices"
)

// ErrNoMembers reports a routing attempt over an empty fleet: the resolver
// has not found any member yet, or every member left.
var ErrNoMembers = errors.New("shard: the fleet has no members")

// Members is an immutable snapshot of the consumers that resources are
// assigned to. Member i of a snapshot is shard i of the frames routed with
// it.
//
// A snapshot assigns in one of two ways:
//
//   - StaticMembers keeps the order it is given and assigns with Jump over
//     the member indexes: the assignment of a fixed endpoints list, the same
//     as before fleets existed. Appending a member moves about 1/(N+1) of
//     the keys; removing or inserting one anywhere else moves many more.
//   - FleetMembers orders members by their stable ID and assigns with
//     rendezvous (highest random weight) hashing over the IDs: each key
//     goes to the member whose ID scores highest for it. Adding or removing
//     any one member of N, wherever it sorts, moves about 1/N of the keys,
//     and every replica that sees the same IDs assigns every key alike.
type Members struct {
	ids   []string
	seeds []uint64 // per-member hash of its ID; nil for a static snapshot
}

// StaticMembers returns a snapshot that assigns by Jump over the indexes of
// ids, kept in the order given.
func StaticMembers(ids []string) *Members {
	return &Members{ids: slices.Clone(ids)}
}

// FleetMembers returns a snapshot that assigns by rendezvous hashing over
// ids, sorted and without repeats.
func FleetMembers(ids []string) *Members {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	m := &Members{ids: sorted, seeds: make([]uint64, len(sorted))}
	for i, id := range sorted {
		m.seeds[i] = memberSeed(id)
	}
	return m
}

// memberSeed hashes a member ID once, when the snapshot is built, so that
// scoring a key costs one mix per member.
func memberSeed(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return mix64(h.Sum64())
}

// mix64 is the finalizer of SplitMix64: every input bit flips about half
// the output bits, so scores of nearby keys or seeds are independent.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Len returns the number of members.
func (m *Members) Len() int { return len(m.ids) }

// ID returns the ID of member i.
func (m *Members) ID(i int) string { return m.ids[i] }

// IDs returns a copy of the member IDs in member order.
func (m *Members) IDs() []string { return slices.Clone(m.ids) }

// Index returns the index of the member with id, and whether there is one.
func (m *Members) Index(id string) (int, bool) {
	if m.seeds == nil {
		i := slices.Index(m.ids, id)
		return i, i >= 0
	}
	return slices.BinarySearch(m.ids, id)
}

// Owner returns the index of the member that key is assigned to. It panics
// on an empty snapshot; callers check Len first (Router returns
// ErrNoMembers).
func (m *Members) Owner(key uint64) int {
	if m.seeds == nil {
		return Jump(key, len(m.ids))
	}
	if len(m.seeds) == 0 {
		panic("shard: Owner called on an empty fleet")
	}
	best, bestScore := 0, mix64(key^m.seeds[0])
	for i := 1; i < len(m.seeds); i++ {
		if s := mix64(key ^ m.seeds[i]); s > bestScore {
			best, bestScore = i, s
		}
	}
	return best
}

// MovedFraction returns the fraction of keys whose owner's ID differs
// between two snapshots. A key that had no owner (from is empty) or has none
// now (to is empty) counts as moved.
func MovedFraction(from, to *Members, keys []uint64) float64 {
	if len(keys) == 0 {
		return 0
	}
	moved := 0
	for _, k := range keys {
		if from.Len() == 0 || to.Len() == 0 || from.ID(from.Owner(k)) != to.ID(to.Owner(k)) {
			moved++
		}
	}
	return float64(moved) / float64(len(keys))
}

// SampleKeys returns n well-spread keys, the same for every call, to
// estimate with MovedFraction what a membership change moves.
func SampleKeys(n int) []uint64 {
	keys := make([]uint64, n)
	var x uint64
	for i := range keys {
		x += 0x9e3779b97f4a7c15
		keys[i] = mix64(x)
	}
	return keys
}
