// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// partitionRequest builds, with the module's own writer, a traces (or
// logs) request of one resource: scope "a" holds items of traces 1, 2, 1,
// none and 3; scope "b" items of trace 2; scope "c" none at all.
func partitionRequest(sig Signal) []byte {
	itemField, idField := 2, 1 // ScopeSpans.spans, Span.trace_id
	if sig == SignalLogs {
		idField = 9 // LogRecord.trace_id
	}
	item := func(p *pb, name string, trace byte) {
		p.msg(itemField, func(p *pb) {
			if trace != 0 {
				id := make([]byte, 16)
				id[0], id[15] = trace, 0xee
				p.bytes(idField, id)
			}
			if sig == SignalTraces {
				p.str(5, name) // Span.name
			} else {
				p.msg(5, func(p *pb) { p.str(1, name) }) // LogRecord.body string_value
			}
		})
	}
	var p pb
	p.msg(1, func(p *pb) {
		p.msg(1, func(p *pb) { // resource
			p.msg(1, func(p *pb) { p.str(1, "service.name"); p.msg(2, func(p *pb) { p.str(1, "checkout") }) })
		})
		p.msg(2, func(p *pb) {
			p.msg(1, func(p *pb) { p.str(1, "a") })
			item(p, "a0", 1)
			item(p, "a1", 2)
			item(p, "a2", 1)
			item(p, "a3", 0)
			item(p, "a4", 3)
			p.str(3, "https://schema/a")
		})
		p.msg(2, func(p *pb) {
			p.msg(1, func(p *pb) { p.str(1, "b") })
			item(p, "b0", 2)
		})
		p.msg(2, func(p *pb) { p.msg(1, func(p *pb) { p.str(1, "c") }) })
		p.str(3, "https://schema/r")
	})
	return p.b
}

// describe renders a one-resource request as "service|scope:item,item|..."
// by reading it with the package's own views.
func describe(t *testing.T, sig Signal, b []byte) string {
	t.Helper()
	var out []string
	for rd, err := range NewRequest(sig, b).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		res, err := rd.Resource()
		if err != nil {
			t.Fatal(err)
		}
		svc, _, err := res.Attribute("service.name")
		if err != nil {
			t.Fatal(err)
		}
		text, _ := svc.Text(nil)
		url, _ := rd.SchemaURL()
		out = append(out, string(text)+"@"+string(url))
		for sd, err := range rd.Scopes() {
			if err != nil {
				t.Fatal(err)
			}
			sc, _ := sd.Scope()
			name, _ := sc.Name()
			surl, _ := sd.SchemaURL()
			var items []string
			if sig == SignalTraces {
				for sp, err := range sd.Spans() {
					if err != nil {
						t.Fatal(err)
					}
					n, _ := sp.Name()
					items = append(items, string(n))
				}
			} else {
				for lr, err := range sd.LogRecords() {
					if err != nil {
						t.Fatal(err)
					}
					body, _ := lr.Body()
					n, _ := body.Text(nil)
					items = append(items, string(n))
				}
			}
			out = append(out, fmt.Sprintf("%s%s:%s", name, map[bool]string{true: "@" + string(surl)}[len(surl) > 0], strings.Join(items, ",")))
		}
	}
	return strings.Join(out, "|")
}

func TestPartitionByTraceIDSplitsByOwner(t *testing.T) {
	for _, sig := range []Signal{SignalTraces, SignalLogs} {
		t.Run(sig.String(), func(t *testing.T) {
			b := partitionRequest(sig)
			var scratch PartitionScratch
			var got []string
			total := 0
			for rd := range NewRequest(sig, b).Resources() {
				for p, err := range PartitionByTraceID(rd, func(id [16]byte) int { return int(id[0]) * 10 }, 99, &scratch) {
					if err != nil {
						t.Fatal(err)
					}
					n, err := NewRequest(sig, p.Request).ItemCount()
					if err != nil || n != p.ItemCount {
						t.Fatalf("owner %d: ItemCount %d, the part holds %d (%v)", p.Owner, p.ItemCount, n, err)
					}
					total += p.ItemCount
					got = append(got, fmt.Sprintf("%d=%s", p.Owner, describe(t, sig, p.Request)))
				}
			}
			want := []string{
				"10=checkout@https://schema/r|a@https://schema/a:a0,a2",
				"20=checkout@https://schema/r|a@https://schema/a:a1|b:b0",
				"99=checkout@https://schema/r|a@https://schema/a:a3",
				"30=checkout@https://schema/r|a@https://schema/a:a4",
			}
			if !slices.Equal(got, want) {
				t.Fatalf("parts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if total != 6 {
				t.Fatalf("parts hold %d items, want 6", total)
			}
		})
	}
}

// A resource without items goes whole to noTrace; metrics are refused;
// malformed input is an error before any part; stopping early is allowed.
func TestPartitionByTraceIDEdges(t *testing.T) {
	var scratch PartitionScratch
	empty := []byte{0x0a, 0x06, 0x0a, 0x00, 0x12, 0x02, 0x0a, 0x00} // a resource and an empty scope
	for rd := range NewRequest(SignalTraces, empty).Resources() {
		var parts []Part
		for p, err := range PartitionByTraceID(rd, func([16]byte) int { return 1 }, 5, &scratch) {
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, p)
		}
		if len(parts) != 1 || parts[0].Owner != 5 || parts[0].ItemCount != 0 || string(parts[0].Request) != string(empty) {
			t.Fatalf("resource without items: %+v", parts)
		}
	}
	for rd := range NewRequest(SignalMetrics, empty).Resources() {
		for _, err := range PartitionByTraceID(rd, func([16]byte) int { return 1 }, 5, &scratch) {
			if !errors.Is(err, ErrWrongSignal) {
				t.Fatalf("metrics: %v, want ErrWrongSignal", err)
			}
		}
	}
	// A span whose trace id is 3 bytes long.
	bad := []byte{0x0a, 0x09, 0x12, 0x07, 0x12, 0x05, 0x0a, 0x03, 1, 2, 3}
	for rd, err := range NewRequest(SignalTraces, bad).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		for _, err := range PartitionByTraceID(rd, func([16]byte) int { return 1 }, 5, &scratch) {
			calls++
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("short trace id: %v, want ErrMalformed", err)
			}
		}
		if calls != 1 {
			t.Fatalf("%d results for malformed input, want one error", calls)
		}
	}
	b := partitionRequest(SignalTraces)
	for rd := range NewRequest(SignalTraces, b).Resources() {
		n := 0
		for range PartitionByTraceID(rd, func(id [16]byte) int { return int(id[0]) }, 0, &scratch) {
			n++
			break
		}
		if n != 1 {
			t.Fatal("break did not stop the iteration")
		}
	}
}

// Once the scratch has grown, partitioning allocates nothing, whatever the
// number of items.
func TestPartitionByTraceIDAllocatesNothingPerItem(t *testing.T) {
	for _, spans := range []int{4, 400} {
		b := partitionSweepRequest(spans)
		var scratch PartitionScratch
		allocs := testing.AllocsPerRun(20, func() {
			for rd := range NewRequest(SignalTraces, b).Resources() {
				for _, err := range PartitionByTraceID(rd, sweepOwner, 0, &scratch) {
					if err != nil {
						t.Fatal(err)
					}
				}
			}
		})
		if allocs != 0 {
			t.Errorf("%d spans: %v allocations per partition", spans, allocs)
		}
	}
}

func sweepOwner(id [16]byte) int { return int(id[0]) % 16 }

// Partitioning metrics by stream allocates nothing either once warm.
func TestPartitionByStreamAllocatesNothing(t *testing.T) {
	ran := 0
	defer func() {
		if ran == 0 {
			t.Error("testdata holds no metrics request")
		}
	}()
	for _, r := range testRequests(t, "") {
		if r.sig != SignalMetrics {
			continue
		}
		ran++
		var scratch PartitionScratch
		run := func() {
			for rd, err := range NewRequest(SignalMetrics, r.b).Resources() {
				if err != nil {
					return
				}
				for range PartitionByStream(rd, func(s uint64) int { return int(s % 16) }, &scratch) {
				}
			}
		}
		run()
		if allocs := testing.AllocsPerRun(10, run); allocs != 0 {
			t.Errorf("%s: %v allocations per partition by stream", r.name, allocs)
		}
	}
}

// partitionSweepRequest is one resource of two scopes holding spans spans
// of distinct traces, each with a few attributes.
func partitionSweepRequest(spans int) []byte {
	var p pb
	p.msg(1, func(p *pb) {
		p.msg(1, func(p *pb) {
			p.msg(1, func(p *pb) { p.str(1, "service.name"); p.msg(2, func(p *pb) { p.str(1, "checkout") }) })
		})
		for s := range 2 {
			p.msg(2, func(p *pb) {
				p.msg(1, func(p *pb) { p.str(1, fmt.Sprintf("scope-%d", s)) })
				for i := range spans / 2 {
					p.msg(2, func(p *pb) {
						id := make([]byte, 16)
						id[0], id[1] = byte(i*7+s), byte(i)
						p.bytes(1, id)
						p.bytes(2, id[:8])
						p.str(5, "op")
						for a := range 5 {
							p.msg(9, func(p *pb) {
								p.str(1, fmt.Sprintf("attr.%d", a))
								p.msg(2, func(p *pb) { p.str(1, "value-value-value") })
							})
						}
					})
				}
			})
		}
	})
	return p.b
}

// Cost against bytes: the time per byte must stay flat from 10 to 10,000
// spans (benchstat the sub-benchmarks' MB/s).
func BenchmarkPartitionByTraceID(b *testing.B) {
	for _, spans := range []int{10, 100, 1000, 10000} {
		req := partitionSweepRequest(spans)
		b.Run(fmt.Sprintf("spans=%d", spans), func(b *testing.B) {
			var scratch PartitionScratch
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			for b.Loop() {
				for rd := range NewRequest(SignalTraces, req).Resources() {
					for _, err := range PartitionByTraceID(rd, sweepOwner, 0, &scratch) {
						if err != nil {
							b.Fatal(err)
						}
					}
				}
			}
		})
	}
}

// Metrics go whole, with all their data points, to the owner of their name.
func TestPartitionByMetricName(t *testing.T) {
	gauge := func(p *pb, name string, points int) {
		p.msg(2, func(p *pb) { // ScopeMetrics.metrics
			p.str(1, name)
			p.msg(5, func(p *pb) { // Metric.gauge
				for i := range points {
					p.msg(1, func(p *pb) { p.fixed64(4, uint64(i+1)) }) // as_double
				}
			})
		})
	}
	var p pb
	p.msg(1, func(p *pb) {
		p.msg(1, func(p *pb) {
			p.msg(1, func(p *pb) { p.str(1, "service.name"); p.msg(2, func(p *pb) { p.str(1, "m") }) })
		})
		p.msg(2, func(p *pb) {
			p.msg(1, func(p *pb) { p.str(1, "scope") })
			gauge(p, "cpu", 2)
			gauge(p, "mem", 3)
			gauge(p, "cpu", 1)
		})
	})
	var scratch PartitionScratch
	got := map[int]int{}
	var owners []int
	for rd := range NewRequest(SignalMetrics, p.b).Resources() {
		for part, err := range PartitionByMetricName(rd, func(name []byte) int { return int(name[0]) }, &scratch) {
			if err != nil {
				t.Fatal(err)
			}
			n, err := NewRequest(SignalMetrics, part.Request).ItemCount()
			if err != nil || n != part.ItemCount {
				t.Fatalf("owner %d: ItemCount %d, the part holds %d (%v)", part.Owner, part.ItemCount, n, err)
			}
			got[part.Owner] += part.ItemCount
			owners = append(owners, part.Owner)
		}
	}
	if !slices.Equal(owners, []int{'c', 'm'}) || got['c'] != 3 || got['m'] != 3 {
		t.Fatalf("owners %v, points %v", owners, got)
	}
	for rd := range NewRequest(SignalTraces, partitionRequest(SignalTraces)).Resources() {
		for _, err := range PartitionByMetricName(rd, func([]byte) int { return 0 }, &scratch) {
			if !errors.Is(err, ErrWrongSignal) {
				t.Fatalf("traces: %v, want ErrWrongSignal", err)
			}
		}
	}
}

// Data points go to the owner of their stream: scope, metric name and
// attributes; a metric keeps its envelope in every part; a metric without
// points goes whole.
func TestPartitionByStream(t *testing.T) {
	point := func(p *pb, host string, v uint64) {
		p.msg(1, func(p *pb) { // Gauge.data_points
			p.fixed64(4, v) // as_double
			p.msg(7, func(p *pb) { p.str(1, "host"); p.msg(2, func(p *pb) { p.str(1, host) }) })
		})
	}
	var p pb
	p.msg(1, func(p *pb) {
		p.msg(1, func(p *pb) {
			p.msg(1, func(p *pb) { p.str(1, "service.name"); p.msg(2, func(p *pb) { p.str(1, "m") }) })
		})
		p.msg(2, func(p *pb) {
			p.msg(1, func(p *pb) { p.str(1, "scope"); p.str(2, "v1") })
			p.msg(2, func(p *pb) {
				p.str(1, "cpu")
				p.str(3, "1") // unit
				p.msg(5, func(p *pb) { point(p, "a", 1); point(p, "b", 2); point(p, "a", 3) })
			})
			p.msg(2, func(p *pb) { p.str(1, "empty"); p.msg(5, func(*pb) {}) })
		})
	})
	var scratch PartitionScratch
	streams := map[uint64]int{}
	owner := func(s uint64) int {
		if _, ok := streams[s]; !ok {
			streams[s] = len(streams)
		}
		return streams[s]
	}
	var got []string
	total := 0
	for rd := range NewRequest(SignalMetrics, p.b).Resources() {
		for part, err := range PartitionByStream(rd, owner, &scratch) {
			if err != nil {
				t.Fatal(err)
			}
			n, err := NewRequest(SignalMetrics, part.Request).ItemCount()
			if err != nil || n != part.ItemCount {
				t.Fatalf("owner %d: ItemCount %d, the part holds %d (%v)", part.Owner, part.ItemCount, n, err)
			}
			total += n
			var desc []string
			for rd := range NewRequest(SignalMetrics, part.Request).Resources() {
				for sd := range rd.Scopes() {
					for m := range sd.Metrics() {
						name, _ := m.Name()
						unit, _ := m.Unit()
						c, _ := NewScopeData(SignalMetrics, sd.Bytes()).ItemCount()
						desc = append(desc, fmt.Sprintf("%s[%s]:%d", name, unit, c))
					}
				}
			}
			got = append(got, fmt.Sprintf("%d=%s", part.Owner, strings.Join(desc, ",")))
		}
	}
	// host a: points 1 and 3; host b: point 2; "empty" to its own stream.
	want := []string{"0=cpu[1]:2", "1=cpu[1]:1", "2=empty[]:0"}
	if !slices.Equal(got, want) || total != 3 {
		t.Fatalf("parts %v (%d points), want %v", got, total, want)
	}
	for rd := range NewRequest(SignalLogs, partitionRequest(SignalLogs)).Resources() {
		for _, err := range PartitionByStream(rd, owner, &scratch) {
			if !errors.Is(err, ErrWrongSignal) {
				t.Fatalf("logs: %v, want ErrWrongSignal", err)
			}
		}
	}
}

// A part whose resource is exactly 128 bytes needs a two-byte length: the
// first length that does not fit one varint byte.
func TestPartitionOfA128ByteResource(t *testing.T) {
	build := func(pad int) []byte {
		var p pb
		p.msg(1, func(p *pb) {
			p.msg(2, func(p *pb) {
				p.msg(2, func(p *pb) {
					id := make([]byte, 16)
					id[0] = 1
					p.bytes(1, id)
					p.str(5, strings.Repeat("x", pad))
				})
			})
		})
		return p.b
	}
	var req []byte
	for pad := 0; pad < 200; pad++ {
		if b := build(pad); len(b) == 3+128 { // tag, two length bytes, 128
			req = b
			break
		}
	}
	if req == nil {
		t.Fatal("no padding gives a 128-byte resource")
	}
	var scratch PartitionScratch
	for rd := range NewRequest(SignalTraces, req).Resources() {
		if len(rd.Bytes()) != 128 {
			t.Fatalf("resource of %d bytes", len(rd.Bytes()))
		}
		for part, err := range PartitionByTraceID(rd, func([16]byte) int { return 0 }, 0, &scratch) {
			if err != nil {
				t.Fatal(err)
			}
			if string(part.Request) != string(req) {
				t.Fatalf("part % x, want the request itself % x", part.Request[:4], req[:4])
			}
		}
		for chunk, err := range SplitResource(rd, 100, nil) {
			if err == nil {
				t.Fatalf("a 131-byte request split into %d bytes at limit 100", len(chunk.Request))
			}
		}
	}
}

// A metrics resource without any metric goes whole to one owner, by name
// and by stream alike; one whose scope holds no metric too.
func TestPartitionMetricsWithoutMetrics(t *testing.T) {
	var noScope, emptyScope pb
	noScope.msg(1, func(p *pb) {
		p.msg(1, func(p *pb) { p.msg(1, func(p *pb) { p.str(1, "k"); p.msg(2, func(p *pb) { p.str(1, "v") }) }) })
	})
	emptyScope.msg(1, func(p *pb) {
		p.msg(1, func(p *pb) { p.msg(1, func(p *pb) { p.str(1, "k"); p.msg(2, func(p *pb) { p.str(1, "v") }) }) })
		p.msg(2, func(p *pb) { p.msg(1, func(p *pb) { p.str(1, "scope") }); p.str(3, "https://schema") })
	})
	for name, req := range map[string][]byte{"no scope": noScope.b, "empty scope": emptyScope.b} {
		var scratch PartitionScratch
		for rd := range NewRequest(SignalMetrics, req).Resources() {
			var byName, byStream []Part
			for p, err := range PartitionByMetricName(rd, func(n []byte) int { return 7 + len(n) }, &scratch) {
				if err != nil {
					t.Fatal(err)
				}
				p.Request = slices.Clone(p.Request)
				byName = append(byName, p)
			}
			for p, err := range PartitionByStream(rd, func(uint64) int { return 9 }, &scratch) {
				if err != nil {
					t.Fatal(err)
				}
				byStream = append(byStream, p)
			}
			if len(byName) != 1 || byName[0].Owner != 7 || string(byName[0].Request) != string(req) {
				t.Errorf("%s by name: %+v", name, byName)
			}
			if len(byStream) != 1 || byStream[0].Owner != 9 || string(byStream[0].Request) != string(req) {
				t.Errorf("%s by stream: %+v", name, byStream)
			}
		}
	}
}

// A stream is its scope's name and version, its metric's name and its
// point's attributes: the same in two scope entries of one scope, different
// in another scope; and each part keeps the resource.
func TestPartitionByStreamIdentity(t *testing.T) {
	scope := func(p *pb, name, version string) {
		p.msg(2, func(p *pb) {
			p.msg(1, func(p *pb) { p.str(1, name); p.str(2, version) })
			p.msg(2, func(p *pb) {
				p.str(1, "cpu")
				p.msg(5, func(p *pb) {
					p.msg(1, func(p *pb) {
						p.fixed64(4, 1)
						p.msg(7, func(p *pb) { p.str(1, "host"); p.msg(2, func(p *pb) { p.str(1, "a") }) })
					})
				})
			})
		})
	}
	var p pb
	p.msg(1, func(p *pb) {
		p.msg(1, func(p *pb) {
			p.msg(1, func(p *pb) { p.str(1, "service.name"); p.msg(2, func(p *pb) { p.str(1, "m") }) })
		})
		scope(p, "s1", "v1")
		scope(p, "s2", "v1")
		scope(p, "s1", "v1")
		scope(p, "s1", "v2")
	})
	var streams []uint64
	var scratch PartitionScratch
	for rd := range NewRequest(SignalMetrics, p.b).Resources() {
		for part, err := range PartitionByStream(rd, func(s uint64) int { streams = append(streams, s); return len(streams) }, &scratch) {
			if err != nil {
				t.Fatal(err)
			}
			for prd := range NewRequest(SignalMetrics, part.Request).Resources() {
				res, err := prd.Resource()
				if err != nil {
					t.Fatal(err)
				}
				if v, ok, _ := res.Attribute("service.name"); !ok || string(v.Str()) != "m" {
					t.Errorf("part of owner %d without its resource", part.Owner)
				}
			}
		}
	}
	if len(streams) != 4 || streams[0] != streams[2] || streams[0] == streams[1] || streams[0] == streams[3] || streams[1] == streams[3] {
		t.Fatalf("streams %x: want the 1st and 3rd equal, the others distinct", streams)
	}
}
