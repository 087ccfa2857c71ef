// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"testing"
)

// goldenResource encodes a Resource message with the given attributes, in
// the given order, as an SDK would.
func goldenResource(attrs ...func(*pb)) []byte {
	var p pb
	for _, a := range attrs {
		p.msg(1, a)
	}
	return p.b
}

func strAttr(k, v string) func(*pb) {
	return func(q *pb) { q.str(1, k); q.msg(2, func(r *pb) { r.bytesAlways(1, []byte(v)) }) }
}

func intAttr(k string, v int64) func(*pb) {
	return func(q *pb) { q.str(1, k); q.msg(2, func(r *pb) { r.varintAlways(3, uint64(v)) }) }
}

// goldenKVList and goldenArray are the nested attributes of the golden
// resources of every hash version.
func goldenKVList(q *pb) {
	q.str(1, "m")
	q.msg(2, func(r *pb) {
		r.msg(6, func(s *pb) {
			s.msg(1, strAttr("a", "1"))
			s.msg(1, intAttr("b", 2))
		})
	})
}

func goldenArray(q *pb) {
	q.str(1, "arr")
	q.msg(2, func(r *pb) {
		r.msg(5, func(s *pb) {
			s.msg(1, func(e *pb) { e.varintAlways(2, 1) })
			s.msg(1, func(e *pb) { e.fixed64Always(4, math.Float64bits(2.5)) })
			s.msg(1, func(e *pb) { e.bytesAlways(7, []byte{0, 1}) })
			s.msg(1, func(*pb) {})
		})
	})
}

// TestHashGolden pins the routing hash: shard assignment depends on it, so
// a change here breaks every deployment that upgrades. Never update these
// values; add a new, versioned hash instead.
func TestHashGolden(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
		want uint64
	}{
		{"empty", goldenResource(), 0x0},
		{"service.name", goldenResource(strAttr("service.name", "checkout")), 0x1cbdd042083b3343},
		{"two", goldenResource(strAttr("service.name", "checkout"), intAttr("pid", 42)), 0x8a93cb8cc64b7323},
		{"nested", goldenResource(strAttr("host", "h1"), goldenKVList, goldenArray), 0x115914a7369eb197},
	}
	for _, c := range cases {
		h, err := NewResource(c.b).Hash()
		if err != nil {
			t.Fatal(err)
		}
		if h != c.want {
			t.Errorf("%s: Hash = %#x, pinned %#x", c.name, h, c.want)
		}
	}
}

func TestHashOrderAndFieldOrderIndependent(t *testing.T) {
	// The same attributes, in the other order, with KeyValue fields written
	// value-first and an entry order change inside the kvlist.
	a := goldenResource(strAttr("x", "1"), intAttr("y", -5), func(q *pb) {
		q.str(1, "m")
		q.msg(2, func(r *pb) {
			r.msg(6, func(s *pb) { s.msg(1, strAttr("a", "1")); s.msg(1, intAttr("b", 2)) })
		})
	})
	b := goldenResource(func(q *pb) {
		q.msg(2, func(r *pb) {
			r.msg(6, func(s *pb) { s.msg(1, intAttr("b", 2)); s.msg(1, strAttr("a", "1")) })
		})
		q.str(1, "m")
	}, func(q *pb) { q.msg(2, func(r *pb) { r.varintAlways(3, uint64(1<<64-5)) }); q.str(1, "y") }, strAttr("x", "1"))
	ha, err1 := NewResource(a).Hash()
	hb, err2 := NewResource(b).Hash()
	if err1 != nil || err2 != nil || ha != hb {
		t.Fatalf("%#x (%v) != %#x (%v)", ha, err1, hb, err2)
	}
	// Arrays are ordered; a swapped value must change the hash.
	c := goldenResource(strAttr("x", "2"), intAttr("y", -5))
	hc, _ := NewResource(c).Hash()
	if hc == ha {
		t.Fatal("different values hash equal")
	}
	// A duplicated attribute does not cancel out.
	d := goldenResource(strAttr("x", "1"), strAttr("x", "1"))
	e := goldenResource()
	hd, _ := NewResource(d).Hash()
	he, _ := NewResource(e).Hash()
	if hd == he {
		t.Fatal("duplicate attributes cancelled out")
	}
}

func TestHashKeys(t *testing.T) {
	r := NewResource(goldenResource(strAttr("service.name", "checkout"), intAttr("pid", 42), strAttr("host", "h")))
	h1, n1, err := r.HashKeys([]string{"service.name", "pid", "missing"})
	if err != nil || n1 != 2 {
		t.Fatalf("found %d, %v", n1, err)
	}
	h2, n2, _ := r.HashKeys([]string{"pid", "service.name", "pid"})
	if h1 != h2 || n2 != 2 {
		t.Fatalf("key order or repetition changed the hash: %#x %#x (%d)", h1, h2, n2)
	}
	full := NewResource(goldenResource(strAttr("service.name", "checkout"), intAttr("pid", 42)))
	hf, _ := full.Hash()
	if hf != h1 {
		t.Fatalf("HashKeys over the same attributes %#x differs from Hash %#x", h1, hf)
	}
	h0, n0, _ := r.HashKeys(nil)
	if n0 != 0 || h0 != 0 {
		t.Fatalf("no keys: %#x, %d", h0, n0)
	}
}

// TestHashMatchesSpec recomputes the documented algorithm from its
// description, with the standard library's FNV-1a, for a few resources.
func TestHashMatchesSpec(t *testing.T) {
	attr := func(enc []byte) uint64 {
		h := fnv.New64a()
		h.Write(enc)
		return mix64(h.Sum64())
	}
	str := func(k, v string) []byte {
		b := append([]byte{byte(len(k))}, k...)
		b = append(b, 1, byte(len(v)))
		return append(b, v...)
	}
	num := func(k string, v int64) []byte {
		b := append([]byte{byte(len(k))}, k...)
		b = append(b, 3)
		return binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	golden := uint64(0x9e3779b97f4a7c15)
	one := mix64(attr(str("service.name", "checkout")) + golden)
	two := mix64(attr(str("service.name", "checkout")) + attr(num("pid", 42)) + 2*golden)
	for _, c := range []struct {
		b    []byte
		want uint64
	}{
		{goldenResource(strAttr("service.name", "checkout")), one},
		{goldenResource(intAttr("pid", 42), strAttr("service.name", "checkout")), two},
	} {
		if h, err := NewResource(c.b).Hash(); err != nil || h != c.want {
			t.Errorf("Hash = %#x, %v; the documented algorithm gives %#x", h, err, c.want)
		}
	}
	// mix64 is SplitMix64's finaliser: check a published output. The first
	// output of SplitMix64 seeded with 0 is mix64(0x9e3779b97f4a7c15).
	if got := mix64(0x9e3779b97f4a7c15); got != 0xe220a8397b1dcdaf {
		t.Errorf("mix64 = %#x", got)
	}
}

// HashKeys reads the resource once for up to 64 keys and once per key
// beyond; both ways hash the first occurrence of each listed key.
func TestHashKeysOnePassMatchesPerKey(t *testing.T) {
	r := NewResource(goldenResource(strAttr("a", "first"), intAttr("b", 1), strAttr("a", "second"), strAttr("c", "3")))
	many := []string{"c", "a", "a"}
	for i := len(many); i < 70; i++ {
		many = append(many, fmt.Sprintf("absent.%d", i))
	}
	for _, keys := range [][]string{{"a"}, {"a", "c"}, {"c", "a", "a"}, {"b", "a", "c"}} {
		got, n, err := r.HashKeys(keys)
		if err != nil {
			t.Fatal(err)
		}
		want, wn, err := r.l.hashKeysEach(HashV1, keys)
		if err != nil || got != want || n != wn {
			t.Fatalf("%v: one pass %#x (%d), per key %#x (%d, %v)", keys, got, n, want, wn, err)
		}
	}
	slow, n, err := r.HashKeys(many)
	if err != nil || n != 2 {
		t.Fatalf("70 keys: %d, %v", n, err)
	}
	if fast, _, _ := r.HashKeys([]string{"a", "c"}); fast != slow {
		t.Fatalf("70 keys %#x, 2 keys %#x", slow, fast)
	}
	first := NewResource(goldenResource(strAttr("a", "first"), strAttr("c", "3")))
	if h, _ := first.Hash(); h != slow {
		t.Fatalf("HashKeys did not take the first occurrence of a duplicated key")
	}
}
