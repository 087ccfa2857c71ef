// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func memberIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("consumer-%d", i)
	}
	return ids
}

// TestFleetChangesMoveAboutOneNth pins the fraction of 100,000 keys that
// move when one member joins or leaves, at the end or in the middle of the
// ID order, within 1.5x of 1/N (N the larger of the two fleets).
func TestFleetChangesMoveAboutOneNth(t *testing.T) {
	keys := SampleKeys(100_000)
	for _, n := range []int{2, 3, 4, 5, 8, 16} {
		ids := memberIDs(n)
		cases := []struct {
			name     string
			from, to []string
		}{
			{"add", ids[:n-1], ids},
			{"remove-last", ids, ids[:n-1]},
			{"remove-middle", ids, slices.Delete(slices.Clone(ids), n/2, n/2+1)},
			{"remove-first", ids, ids[1:]},
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s-%d", c.name, n), func(t *testing.T) {
				moved := MovedFraction(FleetMembers(c.from), FleetMembers(c.to), keys)
				ideal := 1 / float64(n)
				if moved < ideal/1.5 || moved > ideal*1.5 {
					t.Errorf("moved %.4f of the keys, want within 1.5x of 1/%d = %.4f", moved, n, ideal)
				}
			})
		}
	}
}

// TestJumpMovesManyOnRemoveMiddle documents why fleets do not use Jump over
// member indexes: removing a member from the middle renumbers every member
// after it.
func TestJumpMovesManyOnRemoveMiddle(t *testing.T) {
	keys := SampleKeys(100_000)
	ids := memberIDs(8)
	moved := MovedFraction(StaticMembers(ids), StaticMembers(slices.Delete(slices.Clone(ids), 4, 5)), keys)
	if moved < 1.5/8 {
		t.Errorf("jump moved only %.4f on removing a middle member; the rendezvous fleet is not needed?", moved)
	}
}

// TestFleetOwnersAreSpreadEvenly checks that every member of a fleet owns
// about 1/N of the keys.
func TestFleetOwnersAreSpreadEvenly(t *testing.T) {
	keys := SampleKeys(100_000)
	m := FleetMembers(memberIDs(5))
	counts := make([]int, m.Len())
	for _, k := range keys {
		counts[m.Owner(k)]++
	}
	for i, c := range counts {
		if share := float64(c) / float64(len(keys)); math.Abs(share-0.2) > 0.02 {
			t.Errorf("member %s owns %.4f of the keys, want about 0.2", m.ID(i), share)
		}
	}
}

// TestFleetMembersIgnoreOrderAndRepeats checks that replicas that learn the
// same members in different orders assign alike.
func TestFleetMembersIgnoreOrderAndRepeats(t *testing.T) {
	a := FleetMembers([]string{"c", "a", "b"})
	b := FleetMembers([]string{"b", "c", "a", "c"})
	if !slices.Equal(a.IDs(), []string{"a", "b", "c"}) || !slices.Equal(b.IDs(), a.IDs()) {
		t.Fatalf("IDs %v and %v, want [a b c] for both", a.IDs(), b.IDs())
	}
	if moved := MovedFraction(a, b, SampleKeys(10_000)); moved != 0 {
		t.Errorf("the same members in another order moved %.4f of the keys", moved)
	}
	if i, ok := a.Index("b"); !ok || i != 1 {
		t.Errorf("Index(b) = %d, %v, want 1, true", i, ok)
	}
	if _, ok := a.Index("d"); ok {
		t.Error("Index(d) found a member that is not there")
	}
}

// TestFleetOwnerIsTheHighestScore pins rendezvous hashing itself: the owner
// of a key is the member whose score mix64(key ^ seed) is the highest, and
// the assignment of a few keys is pinned too, since a change would move
// keys between replicas of different versions.
func TestFleetOwnerIsTheHighestScore(t *testing.T) {
	m := FleetMembers(memberIDs(5))
	keys := SampleKeys(1000)
	for _, k := range keys {
		owner := m.Owner(k)
		for i := range m.Len() {
			if i != owner && mix64(k^memberSeed(m.ID(i))) >= mix64(k^memberSeed(m.ID(owner))) {
				t.Fatalf("Owner(%#x) = %d, but member %d scores at least as high", k, owner, i)
			}
		}
	}
	var got []string
	for _, k := range keys[:8] {
		got = append(got, m.ID(m.Owner(k)))
	}
	want := []string{"consumer-4", "consumer-4", "consumer-2", "consumer-2", "consumer-4", "consumer-1", "consumer-2", "consumer-0"}
	if !slices.Equal(got, want) {
		t.Fatalf("owners of the first sample keys:\n got %q\nwant %q", got, want)
	}
}

// TestStaticMembersAssignLikeJump pins that a static endpoints list keeps
// the assignment it had before fleets: Jump over the list's indexes.
func TestStaticMembersAssignLikeJump(t *testing.T) {
	m := StaticMembers([]string{"tcp://b:1", "tcp://a:1", "tcp://c:1"})
	for _, k := range SampleKeys(10_000) {
		if got, want := m.Owner(k), Jump(k, 3); got != want {
			t.Fatalf("Owner(%#x) = %d, want Jump's %d", k, got, want)
		}
	}
	if i, ok := m.Index("tcp://a:1"); !ok || i != 1 {
		t.Errorf("Index keeps the given order: got %d, %v, want 1", i, ok)
	}
	if i, ok := m.Index("tcp://b:1"); !ok || i != 0 {
		t.Errorf("Index of the first member: got %d, %v, want 0, true", i, ok)
	}
	if i, ok := m.Index("tcp://d:1"); ok || i != -1 {
		t.Errorf("Index of a stranger: got %d, %v, want -1, false", i, ok)
	}
	if Jump(defaultKey, 7) != DefaultShard {
		t.Error("the default key does not land on DefaultShard")
	}
}

func TestMovedFractionCountsEmptyFleetsAsMoved(t *testing.T) {
	keys := SampleKeys(100)
	if got := MovedFraction(FleetMembers(nil), FleetMembers([]string{"a"}), keys); got != 1 {
		t.Errorf("from an empty fleet: moved %v, want 1", got)
	}
	if got := MovedFraction(FleetMembers([]string{"a"}), FleetMembers(nil), keys); got != 1 {
		t.Errorf("to an empty fleet: moved %v, want 1", got)
	}
}

// BenchmarkOwner is the per-resource cost of the step from routing key to
// member: go test -run '^$' -bench Owner -benchmem ./internal/shard
func BenchmarkOwner(b *testing.B) {
	keys := SampleKeys(1024)
	for _, n := range []int{3, 16} {
		b.Run(fmt.Sprintf("static-%d", n), func(b *testing.B) {
			m := StaticMembers(memberIDs(n))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_ = m.Owner(keys[i&1023])
			}
		})
		b.Run(fmt.Sprintf("fleet-%d", n), func(b *testing.B) {
			m := FleetMembers(memberIDs(n))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_ = m.Owner(keys[i&1023])
			}
		})
	}
}
