// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// Hand walks: minimal hand-written protowire walks that do the least work an
// operation needs (tags and lengths only, no validation beyond what
// protowire does to stay in bounds), to measure otlpwire against. They were
// called floors until otlpwire, which validates more, ran at or below them:
// they are references, not lower bounds. The side-by-side suite with pdata
// lives in benchmarks/.

// handFields calls fn for every LEN field of b; it returns false on a
// framing error.
func handFields(b []byte, fn func(num protowire.Number, v []byte)) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return false
			}
			fn(num, v)
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return false
		}
		b = b[m:]
	}
	return true
}

// handCount counts items: request, resource, scope (and for metrics,
// metric and data message) levels, field 2 scopes only.
func handCount(sig Signal, b []byte) int {
	n := 0
	handFields(b, func(num protowire.Number, rs []byte) {
		if num != 1 {
			return
		}
		handFields(rs, func(num protowire.Number, ss []byte) {
			if num != 2 {
				return
			}
			handFields(ss, func(num protowire.Number, item []byte) {
				if num != 2 {
					return
				}
				if sig != SignalMetrics {
					n++
					return
				}
				points := 0
				handFields(item, func(num protowire.Number, data []byte) {
					if !isMetricData(num) {
						return
					}
					points = 0
					handFields(data, func(num protowire.Number, _ []byte) {
						if num == 1 {
							points++
						}
					})
				})
				n += points
			})
		})
	})
	return n
}

// handResources visits the request's resource fields.
func handResources(b []byte) int {
	n := 0
	handFields(b, func(num protowire.Number, _ []byte) {
		if num == 1 {
			n++
		}
	})
	return n
}

// handLookup finds, in one pass per resource, the string value of the
// first resource attribute named key, and counts the resources having it.
func handLookup(b []byte, key string) int {
	found := 0
	handFields(b, func(num protowire.Number, rs []byte) {
		if num != 1 {
			return
		}
		var val []byte
		ok := false
		handFields(rs, func(num protowire.Number, res []byte) {
			if num != 1 || ok {
				return
			}
			handFields(res, func(num protowire.Number, kv []byte) {
				if num != 1 || ok {
					return
				}
				var k, v []byte
				handFields(kv, func(num protowire.Number, f []byte) {
					switch num {
					case 1:
						k = f
					case 2:
						v = f
					}
				})
				if string(k) == key {
					ok = true
					handFields(v, func(num protowire.Number, s []byte) {
						if num == 1 {
							val = s
						}
					})
				}
			})
		})
		if ok && len(val) > 0 {
			found++
		}
	})
	return found
}

const handKey = "attribute.9" // the last resource attribute of the fixture

func BenchmarkHandWalk(b *testing.B) {
	for _, sig := range signals {
		fx := benchFixture(sig)
		req := NewRequest(sig, fx)
		want, _ := req.ItemCount()
		b.Run(sig.String()+"/count/otlpwire", func(b *testing.B) {
			b.SetBytes(int64(len(fx)))
			for b.Loop() {
				if n, err := req.ItemCount(); err != nil || n != want {
					b.Fatal(n, err)
				}
			}
		})
		b.Run(sig.String()+"/count/handwalk", func(b *testing.B) {
			b.SetBytes(int64(len(fx)))
			for b.Loop() {
				if n := handCount(sig, fx); n != want {
					b.Fatal(n)
				}
			}
		})
		b.Run(sig.String()+"/resources/otlpwire", func(b *testing.B) {
			for b.Loop() {
				n := 0
				for _, err := range req.Resources() {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != benchResources {
					b.Fatal(n)
				}
			}
		})
		b.Run(sig.String()+"/resources/handwalk", func(b *testing.B) {
			for b.Loop() {
				if n := handResources(fx); n != benchResources {
					b.Fatal(n)
				}
			}
		})
		b.Run(sig.String()+"/lookup/otlpwire", func(b *testing.B) {
			for b.Loop() {
				n := 0
				for rd, err := range req.Resources() {
					if err != nil {
						b.Fatal(err)
					}
					res, err := rd.Resource()
					if err != nil {
						b.Fatal(err)
					}
					if v, ok, err := res.Attribute(handKey); err != nil || !ok || len(v.Bytes()) == 0 {
						b.Fatal(ok, err)
					}
					n++
				}
				if n != benchResources {
					b.Fatal(n)
				}
			}
		})
		b.Run(sig.String()+"/lookup/handwalk", func(b *testing.B) {
			for b.Loop() {
				if n := handLookup(fx, handKey); n != benchResources {
					b.Fatal(n)
				}
			}
		})
	}
}

// isMetricData reports whether num is the field of Metric holding its data
// (gauge 5, sum 7, histogram 9, exponential histogram 10, summary 11, as in
// OTLP's metrics.proto).
func isMetricData(num protowire.Number) bool {
	switch num {
	case 5, 7, 9, 10, 11:
		return true
	}
	return false
}
