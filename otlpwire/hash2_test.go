// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"testing"
)

// TestHashV2Golden pins HashV2 as TestHashGolden pins HashV1: shard
// assignment under hash_version 2 depends on these values. Never update
// them; add a new version instead.
func TestHashV2Golden(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want uint64
	}{
		{"empty", goldenResource(), 0x0},
		{"service.name", goldenResource(strAttr("service.name", "checkout")), 0xb3d1fdb7bfc6bf34},
		{"two", goldenResource(strAttr("service.name", "checkout"), intAttr("pid", 42)), 0x42dedf37885f5106},
		{"nested", goldenResource(strAttr("host", "h1"), goldenKVList, goldenArray), 0xe003483063deecd9},
	} {
		h, err := NewResource(c.b).HashWith(HashV2)
		if err != nil {
			t.Fatal(err)
		}
		if h != c.want {
			t.Errorf("%s: HashWith(HashV2) = %#x, pinned %#x", c.name, h, c.want)
		}
	}
}

// specV2 is HashV2 written from the package documentation alone, byte by
// byte and without the package's helpers, to check the implementation
// against its description.
type specV2 struct{}

func (specV2) fold(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// piece absorbs a header and a payload into h as the documentation says.
func (s specV2) piece(h, length, code uint64, payload []byte) uint64 {
	const hdrMul, wordMul = 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b
	h ^= (length<<8 | code) * hdrMul
	for len(payload) > 8 {
		var w uint64
		for i := 7; i >= 0; i-- {
			w = w<<8 | uint64(payload[i])
		}
		h = s.fold(h^w, wordMul)
		payload = payload[8:]
	}
	var last uint64
	switch n := len(payload); {
	case n >= 4:
		var lo, hi uint64
		for i := 3; i >= 0; i-- {
			lo = lo<<8 | uint64(payload[i])
			hi = hi<<8 | uint64(payload[n-4+i])
		}
		last = lo | hi<<32
	case n > 0:
		last = uint64(payload[0]) | uint64(payload[n/2])<<8 | uint64(payload[n-1])<<16
	}
	return s.fold(h^last, wordMul)
}

func (s specV2) attr(key string, value func(h uint64) uint64) uint64 {
	h := s.piece(0x6a09e667f3bcc908, uint64(len(key)), 0, []byte(key))
	return mix64(value(h))
}

func (s specV2) str(v string) func(uint64) uint64 {
	return func(h uint64) uint64 { return s.piece(h, uint64(len(v)), 1, []byte(v)) }
}

func (s specV2) scalar(code uint64, size int, v uint64) func(uint64) uint64 {
	return func(h uint64) uint64 {
		return s.piece(h, uint64(size), code, binary.LittleEndian.AppendUint64(nil, v)[:size])
	}
}

func (s specV2) resource(attrs ...uint64) uint64 {
	var sum uint64
	for _, a := range attrs {
		sum += a
	}
	return mix64(sum + uint64(len(attrs))*0x9e3779b97f4a7c15)
}

func TestHashV2MatchesSpec(t *testing.T) {
	var s specV2
	long := "a value longer than eight bytes, to take several words"
	cases := []struct {
		b    []byte
		want uint64
	}{
		{goldenResource(strAttr("service.name", "checkout")),
			s.resource(s.attr("service.name", s.str("checkout")))},
		{goldenResource(intAttr("pid", 42), strAttr("service.name", "checkout")),
			s.resource(s.attr("pid", s.scalar(3, 8, 42)), s.attr("service.name", s.str("checkout")))},
		{goldenResource(intAttr("big", -7), strAttr("k", long), strAttr("", ""), strAttr("abc", "xyzuv")),
			s.resource(s.attr("big", s.scalar(3, 8, uint64(1<<64-7))), s.attr("k", s.str(long)),
				s.attr("", s.str("")), s.attr("abc", s.str("xyzuv")))},
		{goldenResource(func(q *pb) { q.str(1, "b"); q.msg(2, func(r *pb) { r.varintAlways(2, 1) }) },
			func(q *pb) { q.str(1, "d"); q.msg(2, func(r *pb) { r.fixed64Always(4, math.Float64bits(-0.5)) }) },
			func(q *pb) { q.str(1, "y"); q.msg(2, func(r *pb) { r.bytesAlways(7, []byte{1, 2, 3}) }) },
			func(q *pb) { q.str(1, "e") }),
			s.resource(s.attr("b", s.scalar(2, 1, 1)), s.attr("d", s.scalar(4, 8, math.Float64bits(-0.5))),
				s.attr("y", func(h uint64) uint64 { return s.piece(h, 3, 7, []byte{1, 2, 3}) }),
				s.attr("e", func(h uint64) uint64 { return s.piece(h, 0, 0, nil) }))},
		{goldenResource(goldenKVList),
			s.resource(s.attr("m", func(h uint64) uint64 {
				sum := s.attr("a", s.str("1")) + s.attr("b", s.scalar(3, 8, 2))
				return s.piece(h, 2, 6, binary.LittleEndian.AppendUint64(nil, sum))
			}))},
		{goldenResource(goldenArray),
			s.resource(s.attr("arr", func(h uint64) uint64 {
				h = s.piece(h, 4, 5, nil)
				h = s.scalar(2, 1, 1)(h)
				h = s.scalar(4, 8, math.Float64bits(2.5))(h)
				h = s.piece(h, 2, 7, []byte{0, 1})
				return s.piece(h, 0, 0, nil)
			}))},
	}
	for i, c := range cases {
		if h, err := NewResource(c.b).HashWith(HashV2); err != nil || h != c.want {
			t.Errorf("case %d: HashWith(HashV2) = %#x, %v; the documented algorithm gives %#x", i, h, err, c.want)
		}
	}
}

// Every payload length from 0 to 40 bytes, so each branch of the last-word
// packing and the word loop is taken, agrees with the spec, and lengths
// differing by one never collide on the same prefix.
func TestHashV2PayloadLengths(t *testing.T) {
	var s specV2
	text := "0123456789abcdefghijklmnopqrstuvwxyzABCDEF"
	seen := map[uint64]int{}
	for n := 0; n <= 40; n++ {
		v := text[:n]
		want := s.resource(s.attr("k", s.str(v)))
		got, err := NewResource(goldenResource(strAttr("k", v))).HashWith(HashV2)
		if err != nil || got != want {
			t.Fatalf("%d bytes: %#x, %v; spec %#x", n, got, err, want)
		}
		if prev, ok := seen[got]; ok {
			t.Fatalf("%d and %d bytes hash equal", prev, n)
		}
		seen[got] = n
	}
}

func TestHashV2OrderIndependentAndDistinct(t *testing.T) {
	a := goldenResource(strAttr("x", "1"), intAttr("y", -5), goldenKVList)
	b := goldenResource(goldenKVList, func(q *pb) {
		q.msg(2, func(r *pb) { r.varintAlways(3, uint64(1<<64-5)) })
		q.str(1, "y")
	}, strAttr("x", "1"))
	ha, err1 := NewResource(a).HashWith(HashV2)
	hb, err2 := NewResource(b).HashWith(HashV2)
	if err1 != nil || err2 != nil || ha != hb {
		t.Fatalf("%#x (%v) != %#x (%v)", ha, err1, hb, err2)
	}
	h1, _ := NewResource(a).Hash()
	if h1 == ha {
		t.Fatalf("HashV1 and HashV2 agree (%#x): the versions are not distinct", ha)
	}
	// A string and a bytes value with the same payload, and an int and a
	// double with the same bits, differ.
	for _, pair := range [][2][]byte{
		{goldenResource(strAttr("k", "v")), goldenResource(func(q *pb) {
			q.str(1, "k")
			q.msg(2, func(r *pb) { r.bytesAlways(7, []byte("v")) })
		})},
		{goldenResource(intAttr("k", 3)), goldenResource(func(q *pb) {
			q.str(1, "k")
			q.msg(2, func(r *pb) { r.fixed64Always(4, 3) })
		})},
	} {
		x, _ := NewResource(pair[0]).HashWith(HashV2)
		y, _ := NewResource(pair[1]).HashWith(HashV2)
		if x == y {
			t.Fatalf("different kinds hash equal: %#x", x)
		}
	}
}

// 200,000 distinct resources spread evenly over 16 shards and never
// collide: the quality a routing hash needs.
func TestHashV2Distribution(t *testing.T) {
	const n, shards = 200_000, 16
	seen := make(map[uint64]struct{}, n)
	var count [shards]int
	for i := range n {
		b := goldenResource(strAttr("service.name", fmt.Sprintf("svc-%d", i%1000)),
			intAttr("instance", int64(i/1000)), strAttr("host.name", "host"))
		h, err := NewResource(b).HashWith(HashV2)
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := seen[h]; dup {
			t.Fatalf("resource %d collides", i)
		}
		seen[h] = struct{}{}
		count[h>>60]++
	}
	// Chi-square with 15 degrees of freedom; 37.7 is its 0.999 quantile.
	var chi float64
	for _, c := range count {
		d := float64(c) - n/shards
		chi += d * d / (n / shards)
	}
	if chi > 37.7 {
		t.Fatalf("uneven spread over %d shards: %v (chi-square %.1f)", shards, count, chi)
	}
}

func TestHashVersionUnknown(t *testing.T) {
	r := NewResource(goldenResource(strAttr("k", "v")))
	for _, ver := range []HashVersion{0, 3, 255} {
		if ver.Valid() {
			t.Fatalf("%d is valid", ver)
		}
		if _, err := r.HashWith(ver); !errors.Is(err, ErrHashVersion) {
			t.Fatalf("HashWith(%d): %v", ver, err)
		}
		if _, _, err := r.HashKeysWith(ver, []string{"k"}); !errors.Is(err, ErrHashVersion) {
			t.Fatalf("HashKeysWith(%d): %v", ver, err)
		}
	}
}

// The scalar fast path (splitKV and shortScalar) and the general reader must give the
// same hashes and lookups: attributes written in every shape the fast path
// takes, and the same attributes padded so that it cannot take them.
func TestShortPathsAgreeWithGeneralReader(t *testing.T) {
	shapes := []func(*pb){
		strAttr("s", "short"),
		intAttr("i0", 0), intAttr("i1", 127), intAttr("i2", 128), intAttr("i3", -1), intAttr("i4", 1<<62),
		func(q *pb) { q.str(1, "b"); q.msg(2, func(r *pb) { r.varintAlways(2, 0) }) },
		func(q *pb) { q.str(1, "b2"); q.msg(2, func(r *pb) { r.varintAlways(2, 5) }) },
		func(q *pb) { q.str(1, "d"); q.msg(2, func(r *pb) { r.fixed64Always(4, math.Float64bits(math.NaN())) }) },
		// value first, as pdata writes
		func(q *pb) { q.msg(2, func(r *pb) { r.bytesAlways(1, []byte("pdata")) }); q.str(1, "vf") },
		func(q *pb) { q.msg(2, func(r *pb) { r.varintAlways(3, 300) }); q.str(1, "vfi") },
	}
	res := NewResource(goldenResource(shapes...))
	checkHashesAgainstIteration(t, res)
	for _, key := range []string{"s", "i2", "i3", "b", "b2", "d", "vf", "vfi"} {
		short, ok1, err1 := res.Attribute(key)
		var slow Value
		ok2 := false
		for kv, err := range res.Attributes() {
			if err != nil {
				t.Fatal(err)
			}
			if kv.Key() == key {
				slow, _ = kv.Value()
				ok2 = true
				break
			}
		}
		if err1 != nil || ok1 != ok2 || short.kind != slow.kind || short.num != slow.num || string(short.data) != string(slow.data) {
			t.Fatalf("%s: Attribute %+v %v %v, iteration %+v %v", key, short, ok1, err1, slow, ok2)
		}
	}
}

// checkHashesAgainstIteration recomputes both hash versions of a valid
// resource from Attributes, which reads every attribute with the general
// reader, and compares them with HashWith.
func checkHashesAgainstIteration(t *testing.T, res Resource) {
	t.Helper()
	for _, ver := range []HashVersion{HashV1, HashV2} {
		var sum, n uint64
		for kv, err := range res.Attributes() {
			if err != nil {
				t.Fatal(err)
			}
			v, err := kv.Value()
			if err != nil {
				t.Fatal(err)
			}
			sum += attrHash(ver, kv.KeyBytes(), v)
			n++
		}
		h, err := res.HashWith(ver)
		if err != nil || h != finishHash(sum, n) {
			t.Fatalf("v%d: HashWith = %#x, %v; from the attributes %#x", ver, h, err, finishHash(sum, n))
		}
	}
}

// Hashing arrays and kvlists allocates nothing, in both versions.
func TestHashNestedValuesAllocateNothing(t *testing.T) {
	r := NewResource(goldenResource(strAttr("host", "h1"), goldenKVList, goldenArray))
	for _, ver := range []HashVersion{HashV1, HashV2} {
		if _, err := r.HashWith(ver); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = r.HashWith(ver) }); n != 0 {
			t.Errorf("v%d: %v allocations per hash of nested values", ver, n)
		}
	}
}
