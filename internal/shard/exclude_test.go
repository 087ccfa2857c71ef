// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func excludeCases() map[string]*Members {
	ids := []string{"a", "b", "c", "d", "e"}
	return map[string]*Members{"fleet": FleetMembers(ids), "static": StaticMembers(ids)}
}

// Excluding a member moves its keys and only its keys, spread evenly over
// the members left.
func TestExcludingMovesOnlyTheExcludedMembersKeys(t *testing.T) {
	for name, m := range excludeCases() {
		for _, excluded := range [][]int{{0}, {2}, {4}, {1, 3}, {0, 1, 2}} {
			t.Run(fmt.Sprint(name, excluded), func(t *testing.T) {
				x := m.Excluding(excluded)
				if x.Len() != m.Len() {
					t.Fatalf("Len %d, want %d", x.Len(), m.Len())
				}
				for i := range m.Len() {
					if x.ID(i) != m.ID(i) {
						t.Fatalf("ID(%d) = %q, want %q", i, x.ID(i), m.ID(i))
					}
					if got, want := x.Excluded(i), slices.Contains(excluded, i); got != want {
						t.Fatalf("Excluded(%d) = %v, want %v", i, got, want)
					}
				}
				moved := make([]int, m.Len())
				total := 0
				for _, k := range SampleKeys(50_000) {
					before, after := m.Owner(k), x.Owner(k)
					if x.Excluded(after) {
						t.Fatalf("key %x owned by excluded member %d", k, after)
					}
					if !x.Excluded(before) {
						if after != before {
							t.Fatalf("key %x of member %d moved to %d", k, before, after)
						}
						continue
					}
					moved[after]++
					total++
				}
				left := m.Len() - len(excluded)
				for i, n := range moved {
					if x.Excluded(i) {
						continue
					}
					if share := float64(n) / float64(total); math.Abs(share-1/float64(left)) > 0.03 {
						t.Errorf("member %d took %.3f of the moved keys, want about %.3f", i, share, 1/float64(left))
					}
				}
			})
		}
	}
}

// In a fleet, an excluded member's keys go where they would go if it had
// left: the next member in rendezvous order, so a later leave moves nothing
// more.
func TestFleetExcludingIsTheNextRendezvousOwner(t *testing.T) {
	m := FleetMembers([]string{"a", "b", "c", "d", "e"})
	x := m.Excluding([]int{1, 3})
	gone := FleetMembers([]string{"a", "c", "e"})
	for _, k := range SampleKeys(20_000) {
		if got, want := x.ID(x.Owner(k)), gone.ID(gone.Owner(k)); got != want {
			t.Fatalf("key %x: owner %q excluding b and d, %q without them", k, got, want)
		}
	}
}

// Two replicas that exclude the same members agree on every key, whatever
// order they name them in.
func TestExcludingIsTheSameOnEveryReplica(t *testing.T) {
	for name, m := range excludeCases() {
		x1, x2 := m.Excluding([]int{3, 1}), m.Excluding([]int{1, 3, 3})
		for _, k := range SampleKeys(20_000) {
			if x1.Owner(k) != x2.Owner(k) {
				t.Fatalf("%s: key %x owned by %d and %d", name, k, x1.Owner(k), x2.Owner(k))
			}
		}
	}
}

// A key always has an owner: excluding every member excludes none, and
// indexes out of range are ignored.
func TestExcludingEveryMemberExcludesNone(t *testing.T) {
	for name, m := range excludeCases() {
		for _, excluded := range [][]int{{0, 1, 2, 3, 4}, {-1, 5, 99}, nil} {
			x := m.Excluding(excluded)
			for i := range m.Len() {
				if x.Excluded(i) {
					t.Fatalf("%s excluding %v: member %d excluded", name, excluded, i)
				}
			}
			for _, k := range SampleKeys(1000) {
				if x.Owner(k) != m.Owner(k) {
					t.Fatalf("%s excluding %v: key %x moved", name, excluded, k)
				}
			}
		}
	}
}

// A static list with all but one member excluded still finds that one,
// even for keys whose rehashes keep landing on excluded members.
func TestStaticExcludingAllButOne(t *testing.T) {
	ids := make([]string, 200)
	var all []int
	for i := range ids {
		ids[i] = fmt.Sprint(i)
		if i != 137 {
			all = append(all, i)
		}
	}
	x := StaticMembers(ids).Excluding(all)
	for _, k := range SampleKeys(2000) {
		if o := x.Owner(k); o != 137 {
			t.Fatalf("key %x owned by %d, want 137", k, o)
		}
	}
}

// Routing over a snapshot with excluded members allocates nothing.
func TestOwnerExcludingAllocatesNothing(t *testing.T) {
	for name, m := range excludeCases() {
		x := m.Excluding([]int{2})
		keys := SampleKeys(100)
		if n := testing.AllocsPerRun(100, func() {
			for _, k := range keys {
				_ = x.Owner(k)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations per run", name, n)
		}
	}
}
