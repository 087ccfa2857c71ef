// SPDX-License-Identifier: Apache-2.0

package wirebench

import (
	"fmt"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// Benchmark names are key=value paths so that benchstat can put the
// implementations side by side (benchstat -col /impl) and benchchart can draw
// the sweeps: op, sig, enc, shape or the swept parameter, then impl.
// Every benchmark sets its bytes (MB/s, hence ns per KB) to the size of the
// request it works on.

var (
	cache Cache
	sink  int
	sinkU uint64
)

// cutLimit is the request size limit of the family cut benchmarks.
const cutLimit = 16 << 10

func measure(b *testing.B, size int, fn func() error) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if err := fn(); err != nil {
			b.Fatal(err)
		}
	}
}

func count(sig otlpwire.Signal, p []byte) func() error {
	return func() error {
		n, err := otlpwire.NewRequest(sig, p).ItemCount()
		sink += n
		return err
	}
}

func countWalk(sig otlpwire.Signal, p []byte) func() error {
	return func() error {
		n, err := WalkCount(sig, p)
		sink += n
		return err
	}
}

func countPdata(sig otlpwire.Signal, p []byte) func() error {
	return func() error {
		n, err := PdataCount(sig, p)
		sink += n
		return err
	}
}

func memcpy(p []byte) func() error {
	dst := make([]byte, len(p))
	return func() error {
		sink += copy(dst, p)
		return nil
	}
}

func cut(sig otlpwire.Signal, p []byte, limit int) func() error {
	scratch := make([]byte, 0, limit)
	return func() error {
		c, _, _, err := WireCut(sig, p, limit, scratch)
		sink += c
		return err
	}
}

func split(sig otlpwire.Signal, p []byte) func() error {
	dst := make([]byte, 0, len(p))
	return func() error {
		n, d, err := WireSplit(sig, p, dst)
		dst = d
		sink += n
		return err
	}
}

// opsFor returns the implementations of one operation on one payload:
// otlpwire first, then the hand walks and pdata.
func opsFor(op string, p Payload) []struct {
	impl string
	fn   func() error
} {
	type impl = struct {
		impl string
		fn   func() error
	}
	sig, b := p.Signal, p.Bytes
	switch op {
	case "count":
		return []impl{{"otlpwire", count(sig, b)}, {"walk", countWalk(sig, b)}, {"pdata", countPdata(sig, b)}}
	case "resources":
		return []impl{
			{"otlpwire", func() error { n, _, err := WireResources(sig, b); sink += n; return err }},
			{"walk", func() error { n, _, err := HandResources(b); sink += n; return err }},
		}
	case "lookup":
		return []impl{
			{"otlpwire", func() error { n, _, err := WireLookup(sig, b, LookupKey); sink += n; return err }},
			{"walk", func() error { n, _, err := WalkLookup(b, LookupKey); sink += n; return err }},
		}
	case "hash":
		maps, err := PdataResourceAttrs(sig, b)
		if err != nil {
			panic(err)
		}
		return []impl{
			{"otlpwire", func() error { h, err := WireHash(sig, b, otlpwire.HashV2); sinkU += h; return err }},
			{"pdatautil", func() error { sinkU += PdataMapHash(maps); return nil }},
			{"otlpwire-v1", func() error { h, err := WireHash(sig, b, otlpwire.HashV1); sinkU += h; return err }},
		}
	case "split":
		return []impl{{"otlpwire", split(sig, b)}, {"memcpy", memcpy(b)}}
	case "cut":
		return []impl{{"otlpwire", cut(sig, b, cutLimit)}, {"memcpy", memcpy(b)}}
	}
	panic("unknown op " + op)
}

// runOps runs op's implementations on p as sub-benchmarks "<impl>".
func runOps(b *testing.B, op string, p Payload) {
	for _, o := range opsFor(op, p) {
		b.Run("impl="+o.impl, func(b *testing.B) {
			measure(b, len(p.Bytes), o.fn)
			if op == "hash" || op == "lookup" || op == "resources" {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(p.Shape.Resources), "ns/resource")
			}
		})
	}
}

// benchFamilies runs op on every payload family: signal, encoding, shape.
func benchFamilies(b *testing.B, op string) {
	for _, sig := range Signals {
		for _, enc := range Encodings {
			for _, sh := range FamilyShapes {
				p := cache.Get(sig, sh, enc)
				b.Run(fmt.Sprintf("sig=%v/enc=%v/shape=%v", sig, enc, sh), func(b *testing.B) { runOps(b, op, p) })
			}
		}
	}
}

// Counting items: otlpwire's ItemCount, the hand walk to the items, pdata's
// unmarshal and count.
func BenchmarkCount(b *testing.B) { benchFamilies(b, "count") }

// Iterating resources: otlpwire's Request.Resources against a walk over the
// request's field 1.
func BenchmarkResources(b *testing.B) { benchFamilies(b, "resources") }

// Reading the resource attribute host.name (the last of each resource's
// attributes) of every resource: Resource.Attribute against a single-pass
// hand-written lookup.
func BenchmarkLookup(b *testing.B) { benchFamilies(b, "lookup") }

// Routing hash of every resource: otlpwire's Resource.Hash on the bytes
// against contrib pdatautil.MapHash on the already decoded attribute map
// (decoding is not timed).
func BenchmarkHash(b *testing.B) { benchFamilies(b, "hash") }

// Splitting a request into one request per resource with AppendRequest,
// against one memcpy of the request.
func BenchmarkSplit(b *testing.B) { benchFamilies(b, "split") }

// Cutting every resource into requests of at most 16 KiB with SplitResource,
// against one memcpy of the request.
func BenchmarkCut(b *testing.B) { benchFamilies(b, "cut") }

// sweepEncodings runs fn for both encodings of traces of the given shape.
func sweep(b *testing.B, param string, value int, sh Shape, ops ...string) {
	for _, enc := range Encodings {
		p := cache.Get(otlpwire.SignalTraces, sh, enc)
		for _, op := range ops {
			b.Run(fmt.Sprintf("op=%s/enc=%v/%s=%d", op, enc, param, value), func(b *testing.B) { runOps(b, op, p) })
		}
	}
}

// Items per request, 10 to 10,000 spans in one resource and one scope.
func BenchmarkSweepItems(b *testing.B) {
	for _, n := range []int{10, 100, 1_000, 10_000} {
		sweep(b, "items", n, Shape{Resources: 1, Scopes: 1, Items: n, Attrs: 5}, "count", "cut")
	}
}

// Resources per request, 1 to 1,000 resources of 10 attributes and 10 spans.
func BenchmarkSweepResources(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1_000} {
		sweep(b, "resources", n, Shape{Resources: n, Scopes: 1, Items: 10, Attrs: 10},
			"count", "resources", "lookup", "hash", "split")
	}
}

// Scopes per resource, 1 to 10,000, holding 10,000 spans in all (10,000
// one-span scopes at the end), counted and cut at 16 KiB.
func BenchmarkSweepScopes(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1_000, 10_000} {
		sweep(b, "scopes", n, Shape{Resources: 1, Scopes: n, Items: 10_000 / n, Attrs: 5}, "count", "cut", "split")
	}
}

// The cut limit, 4 KiB to 1 MiB, on one resource of 10,000 spans of 15
// attributes (3.7 MB): from over a thousand chunks down to a handful.
// Each run reports its chunk count.
func BenchmarkSweepCutLimit(b *testing.B) {
	sh := Shape{Resources: 1, Scopes: 1, Items: 10_000, Attrs: 15}
	for _, enc := range Encodings {
		p := cache.Get(otlpwire.SignalTraces, sh, enc)
		for _, limit := range []int{4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20} {
			chunks, _, _, err := WireCut(p.Signal, p.Bytes, limit, nil)
			if err != nil {
				b.Fatal(err)
			}
			for _, o := range []struct {
				impl string
				fn   func() error
			}{{"otlpwire", cut(p.Signal, p.Bytes, limit)}, {"memcpy", memcpy(p.Bytes)}} {
				b.Run(fmt.Sprintf("op=cut/enc=%v/limit=%d/impl=%s", enc, limit, o.impl), func(b *testing.B) {
					measure(b, len(p.Bytes), o.fn)
					b.ReportMetric(float64(chunks), "chunks")
				})
			}
		}
	}
}
