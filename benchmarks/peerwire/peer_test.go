// SPDX-License-Identifier: Apache-2.0

package peerwire

import (
	"fmt"
	"testing"

	peer "go.olly.garden/otlp-wire"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/wirebench"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// Benchmark names are key=value paths, as in wirebench, so that benchstat
// -col /impl puts otlpwire, otlp-wire and the hand walk side by side.

var (
	cache wirebench.Cache
	sink  int
)

// peerCount counts the items of a request with the peer's per-signal count.
func peerCount(sig otlpwire.Signal, b []byte) (int, error) {
	switch sig {
	case otlpwire.SignalTraces:
		return peer.ExportTracesServiceRequest(b).SpanCount()
	case otlpwire.SignalMetrics:
		return peer.ExportMetricsServiceRequest(b).DataPointCount()
	}
	return peer.ExportLogsServiceRequest(b).LogRecordCount()
}

// peerResources iterates the resources of a request with the peer's
// zero-allocation iterators and returns how many there are and their size.
func peerResources(sig otlpwire.Signal, b []byte) (n, size int, err error) {
	each := func(r []byte, e error) bool {
		if e != nil {
			err = e
			return false
		}
		n++
		size += len(r)
		return true
	}
	switch sig {
	case otlpwire.SignalTraces:
		peer.ExportTracesServiceRequest(b).ResourceSpansSeq(func(r peer.ResourceSpans, e error) bool { return each(r, e) })
	case otlpwire.SignalMetrics:
		peer.ExportMetricsServiceRequest(b).ResourceMetricsSeq(func(r peer.ResourceMetrics, e error) bool { return each(r, e) })
	default:
		peer.ExportLogsServiceRequest(b).ResourceLogsSeq(func(r peer.ResourceLogs, e error) bool { return each(r, e) })
	}
	return n, size, err
}

// peerLookup looks key up in the resource of every ResourceX of a request
// with the peer's Resource.StringAttribute and returns the total length of
// the values found and how many resources had the key.
func peerLookup(sig otlpwire.Signal, b []byte, key string) (total, found int, err error) {
	look := func(res peer.Resource, e error) bool {
		if e != nil {
			err = e
			return false
		}
		v, ok, e := res.StringAttribute(key)
		if e != nil {
			err = e
			return false
		}
		if ok {
			found++
			total += len(v)
		}
		return true
	}
	fail := func(e error) bool { err = e; return false }
	switch sig {
	case otlpwire.SignalTraces:
		peer.ExportTracesServiceRequest(b).ResourceSpansSeq(func(r peer.ResourceSpans, e error) bool {
			if e != nil {
				return fail(e)
			}
			return look(r.Resource())
		})
	case otlpwire.SignalMetrics:
		peer.ExportMetricsServiceRequest(b).ResourceMetricsSeq(func(r peer.ResourceMetrics, e error) bool {
			if e != nil {
				return fail(e)
			}
			return look(r.Resource())
		})
	default:
		peer.ExportLogsServiceRequest(b).ResourceLogsSeq(func(r peer.ResourceLogs, e error) bool {
			if e != nil {
				return fail(e)
			}
			return look(r.Resource())
		})
	}
	return total, found, err
}

type impl struct {
	name string
	fn   func() error
}

// ops returns the implementations of one operation on one payload, otlpwire
// first; each adds its answer to sink.
func ops(op string, p wirebench.Payload) []impl {
	sig, b := p.Signal, p.Bytes
	switch op {
	case "count":
		return []impl{
			{"otlpwire", func() error { n, err := otlpwire.NewRequest(sig, b).ItemCount(); sink += n; return err }},
			{"otlp-wire", func() error { n, err := peerCount(sig, b); sink += n; return err }},
			{"walk", func() error { n, err := wirebench.WalkCount(sig, b); sink += n; return err }},
		}
	case "resources":
		return []impl{
			{"otlpwire", func() error { n, _, err := wirebench.WireResources(sig, b); sink += n; return err }},
			{"otlp-wire", func() error { n, _, err := peerResources(sig, b); sink += n; return err }},
			{"walk", func() error { n, _, err := wirebench.HandResources(b); sink += n; return err }},
		}
	case "lookup":
		return []impl{
			{"otlpwire", func() error { n, _, err := wirebench.WireLookup(sig, b, wirebench.LookupKey); sink += n; return err }},
			{"otlp-wire", func() error { n, _, err := peerLookup(sig, b, wirebench.LookupKey); sink += n; return err }},
			{"walk", func() error { n, _, err := wirebench.WalkLookup(b, wirebench.LookupKey); sink += n; return err }},
		}
	}
	panic("peerwire: unknown op " + op)
}

var opNames = []string{"count", "resources", "lookup"}

// TestAgree checks that the implementations give otlpwire's answers on every
// payload family before the benchmarks compare their costs.
func TestAgree(t *testing.T) {
	for _, op := range opNames {
		for _, sig := range wirebench.Signals {
			for _, enc := range wirebench.Encodings {
				for _, sh := range wirebench.FamilyShapes {
					p := cache.Get(sig, sh, enc)
					want := 0
					for i, o := range ops(op, p) {
						sink = 0
						if err := o.fn(); err != nil {
							t.Fatalf("%s %s %s: %v", op, p.Name(), o.name, err)
						}
						if i == 0 {
							want = sink
						} else if sink != want {
							t.Errorf("%s %s: %s answers %d, otlpwire %d", op, p.Name(), o.name, sink, want)
						}
					}
				}
			}
		}
	}
}

// bench runs op's implementations on every payload family.
func bench(b *testing.B, op string) {
	for _, sig := range wirebench.Signals {
		for _, enc := range wirebench.Encodings {
			for _, sh := range wirebench.FamilyShapes {
				p := cache.Get(sig, sh, enc)
				b.Run(fmt.Sprintf("sig=%v/enc=%v/shape=%v", sig, enc, sh), func(b *testing.B) {
					for _, o := range ops(op, p) {
						b.Run("impl="+o.name, func(b *testing.B) {
							b.SetBytes(int64(len(p.Bytes)))
							b.ReportAllocs()
							for b.Loop() {
								if err := o.fn(); err != nil {
									b.Fatal(err)
								}
							}
						})
					}
				})
			}
		}
	}
}

// Counting items: ItemCount, the peer's SpanCount, DataPointCount and
// LogRecordCount, the hand walk to the items.
func BenchmarkCount(b *testing.B) { bench(b, "count") }

// Iterating resources: Request.Resources, the peer's ResourceXSeq, a walk
// over the request's field 1.
func BenchmarkResources(b *testing.B) { bench(b, "resources") }

// Reading the resource attribute host.name (the last of each resource's
// attributes) of every resource: Resource.Attribute, the peer's
// Resource.StringAttribute, the single-pass hand lookup.
func BenchmarkLookup(b *testing.B) { bench(b, "lookup") }
