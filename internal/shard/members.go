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
	// excluded marks the members whose keys go to their next owners
	// (Excluding); nil when none is.
	excluded []bool
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

// Excluding returns a snapshot of the same members, in the same order,
// in which the keys of the members listed in excluded go to their next
// owners: for a fleet, the member whose ID scores next highest; for a
// static list, the first member that a fixed sequence of rehashes of the
// key lands on. Keys of the other members stay where they are, and every
// replica that excludes the same members assigns every key alike.
// Indexes out of range are ignored. Excluding every member excludes none:
// a key always has an owner.
func (m *Members) Excluding(excluded []int) *Members {
	out := &Members{ids: m.ids, seeds: m.seeds}
	mask := make([]bool, len(m.ids))
	n := 0
	for _, i := range excluded {
		if i >= 0 && i < len(mask) && !mask[i] {
			mask[i] = true
			n++
		}
	}
	if n == 0 || n == len(mask) {
		return out
	}
	out.excluded = mask
	return out
}

// Excluded reports whether member i's keys go to other members.
func (m *Members) Excluded(i int) bool {
	return m.excluded != nil && m.excluded[i]
}

// Owner returns the index of the member that key is assigned to. It panics
// on an empty snapshot; callers check Len first (Router returns
// ErrNoMembers).
func (m *Members) Owner(key uint64) int {
	if m.seeds == nil {
		j := Jump(key, len(m.ids))
		if m.excluded != nil && m.excluded[j] {
			return m.staticNext(key)
		}
		return j
	}
	if len(m.seeds) == 0 {
		panic("shard: Owner called on an empty fleet")
	}
	if m.excluded != nil {
		return m.fleetOwnerExcluding(key)
	}
	best, bestScore := 0, mix64(key^m.seeds[0])
	for i := 1; i < len(m.seeds); i++ {
		if s := mix64(key ^ m.seeds[i]); s > bestScore {
			best, bestScore = i, s
		}
	}
	return best
}

// fleetOwnerExcluding is Owner's rendezvous over the members not excluded.
func (m *Members) fleetOwnerExcluding(key uint64) int {
	var best int
	var bestScore uint64
	found := false
	for i, seed := range m.seeds {
		if m.excluded[i] {
			continue
		}
		if s := mix64(key ^ seed); !found || s > bestScore {
			best, bestScore, found = i, s, true
		}
	}
	return best
}

// staticNext is the owner of a key whose Jump member is excluded: Jump over
// rehashes of the key until one lands on a member that is not. Each rehash
// is a fresh uniform draw, so the excluded member's keys spread evenly; the
// scan after maxRehashes only bounds the work when nearly all are excluded.
func (m *Members) staticNext(key uint64) int {
	const maxRehashes = 64
	for range maxRehashes {
		key = mix64(key + 0x9e3779b97f4a7c15)
		if j := Jump(key, len(m.ids)); !m.excluded[j] {
			return j
		}
	}
	j := Jump(key, len(m.ids))
	for m.excluded[j] {
		j = (j + 1) % len(m.ids)
	}
	return j
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
