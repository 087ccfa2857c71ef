// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// noTraceOwner is where these tests send items without a trace id; the
// others go to one of three owners by the trace id's first byte.
const noTraceOwner = 7

func partitionOwner(id [16]byte) int { return int(id[0]) % 3 }

func ownerOf(id [16]byte) int {
	if id == ([16]byte{}) {
		return noTraceOwner
	}
	return partitionOwner(id)
}

// want is pdata's idea of one resource's partition: the owners in the
// order of their first items, and per owner the request pdata marshals and
// its item count.
type want struct {
	owners []int
	parts  map[int][]byte
	items  map[int]int
}

// expectedTraces partitions resource ri of b with pdata.
func expectedTraces(t *testing.T, b []byte, ri int) want {
	t.Helper()
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	rs := req.Traces().ResourceSpans().At(ri)
	w := want{parts: map[int][]byte{}, items: map[int]int{}}
	byOwner := map[int]ptrace.ResourceSpans{}
	lastScope := map[int]int{}
	keep := ptrace.NewTraces()
	for si, ss := range rs.ScopeSpans().All() {
		for _, sp := range ss.Spans().All() {
			o := ownerOf(sp.TraceID())
			out, ok := byOwner[o]
			if !ok {
				out = ptrace.NewTraces().ResourceSpans().AppendEmpty()
				rs.Resource().CopyTo(out.Resource())
				out.SetSchemaUrl(rs.SchemaUrl())
				byOwner[o] = out
				w.owners = append(w.owners, o)
				lastScope[o] = -1
			}
			if lastScope[o] != si {
				ns := out.ScopeSpans().AppendEmpty()
				ss.Scope().CopyTo(ns.Scope())
				ns.SetSchemaUrl(ss.SchemaUrl())
				lastScope[o] = si
			}
			sp.CopyTo(out.ScopeSpans().At(out.ScopeSpans().Len() - 1).Spans().AppendEmpty())
			w.items[o]++
		}
	}
	for o, out := range byOwner {
		td := ptrace.NewTraces()
		out.CopyTo(td.ResourceSpans().AppendEmpty())
		w.parts[o], _ = ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	}
	if len(w.owners) == 0 {
		rs.CopyTo(keep.ResourceSpans().AppendEmpty())
		w.owners = []int{noTraceOwner}
		w.parts[noTraceOwner], _ = ptraceotlp.NewExportRequestFromTraces(keep).MarshalProto()
	}
	return w
}

// expectedLogs partitions resource ri of b with pdata.
func expectedLogs(t *testing.T, b []byte, ri int) want {
	t.Helper()
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	rl := req.Logs().ResourceLogs().At(ri)
	w := want{parts: map[int][]byte{}, items: map[int]int{}}
	byOwner := map[int]plog.ResourceLogs{}
	lastScope := map[int]int{}
	for si, sl := range rl.ScopeLogs().All() {
		for _, lr := range sl.LogRecords().All() {
			o := ownerOf(lr.TraceID())
			out, ok := byOwner[o]
			if !ok {
				out = plog.NewLogs().ResourceLogs().AppendEmpty()
				rl.Resource().CopyTo(out.Resource())
				out.SetSchemaUrl(rl.SchemaUrl())
				byOwner[o] = out
				w.owners = append(w.owners, o)
				lastScope[o] = -1
			}
			if lastScope[o] != si {
				ns := out.ScopeLogs().AppendEmpty()
				sl.Scope().CopyTo(ns.Scope())
				ns.SetSchemaUrl(sl.SchemaUrl())
				lastScope[o] = si
			}
			lr.CopyTo(out.ScopeLogs().At(out.ScopeLogs().Len() - 1).LogRecords().AppendEmpty())
			w.items[o]++
		}
	}
	for o, out := range byOwner {
		ld := plog.NewLogs()
		out.CopyTo(ld.ResourceLogs().AppendEmpty())
		w.parts[o], _ = plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	}
	if len(w.owners) == 0 {
		ld := plog.NewLogs()
		rl.CopyTo(ld.ResourceLogs().AppendEmpty())
		w.owners = []int{noTraceOwner}
		w.parts[noTraceOwner], _ = plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	}
	return w
}

// remarshal is what pdata makes of a request: decoded and encoded again.
func remarshal(t *testing.T, sig Signal, b []byte) []byte {
	t.Helper()
	var out []byte
	var err error
	switch sig {
	case SignalTraces:
		req := ptraceotlp.NewExportRequest()
		if err = req.UnmarshalProto(b); err == nil {
			out, err = req.MarshalProto()
		}
	default:
		req := plogotlp.NewExportRequest()
		if err = req.UnmarshalProto(b); err == nil {
			out, err = req.MarshalProto()
		}
	}
	if err != nil {
		t.Fatalf("pdata rejects a part: %v", err)
	}
	return out
}

// Partitioning by trace id against pdata, on pdata- and SDK-ordered
// encodings (deprecated scopes, decoys, reversed attributes, unpacked
// fields): every part holds the resource and, per scope, exactly its
// owner's items, with envelopes equal to pdata's; owners come in the order
// of their first items; counts are exact.
func TestDifferentialPartitionByTraceID(t *testing.T) {
	forEachCase(t, 3, func(t *testing.T, sig Signal, _ encoding, b []byte, _ decoded, _ []byte) {
		var scratch PartitionScratch
		ri := 0
		for rd, err := range NewRequest(sig, b).Resources() {
			if err != nil {
				t.Fatal(err)
			}
			parts := PartitionByTraceID(rd, partitionOwner, noTraceOwner, &scratch)
			if sig == SignalMetrics {
				for _, err := range parts {
					if !errors.Is(err, ErrWrongSignal) {
						t.Fatalf("metrics: %v, want ErrWrongSignal", err)
					}
				}
				continue
			}
			var w want
			if sig == SignalTraces {
				w = expectedTraces(t, b, ri)
			} else {
				w = expectedLogs(t, b, ri)
			}
			var owners []int
			for p, err := range parts {
				if err != nil {
					t.Fatal(err)
				}
				owners = append(owners, p.Owner)
				if got := remarshal(t, sig, p.Request); !bytes.Equal(got, w.parts[p.Owner]) {
					t.Fatalf("resource %d, owner %d: the part differs from pdata's", ri, p.Owner)
				}
				if p.ItemCount != w.items[p.Owner] {
					t.Fatalf("resource %d, owner %d: ItemCount %d, pdata %d", ri, p.Owner, p.ItemCount, w.items[p.Owner])
				}
				if n, err := NewRequest(sig, p.Request).ItemCount(); err != nil || n != p.ItemCount {
					t.Fatalf("resource %d, owner %d: the part counts %d (%v), ItemCount %d", ri, p.Owner, n, err, p.ItemCount)
				}
			}
			if !slices.Equal(owners, w.owners) {
				t.Fatalf("resource %d: owners %v, pdata %v", ri, owners, w.owners)
			}
			ri++
		}
	})
}

// metricOwner spreads metrics over three owners by the last byte of their
// name (generated names end in their index).
func metricOwner(name []byte) int {
	if len(name) == 0 {
		return 5
	}
	return int(name[len(name)-1]) % 3
}

// expectedMetrics partitions resource ri of b by metric name with pdata.
func expectedMetrics(t *testing.T, b []byte, ri int) want {
	t.Helper()
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	rm := req.Metrics().ResourceMetrics().At(ri)
	w := want{parts: map[int][]byte{}, items: map[int]int{}}
	byOwner := map[int]pmetric.ResourceMetrics{}
	lastScope := map[int]int{}
	for si, sm := range rm.ScopeMetrics().All() {
		for _, m := range sm.Metrics().All() {
			o := metricOwner([]byte(m.Name()))
			out, ok := byOwner[o]
			if !ok {
				out = pmetric.NewMetrics().ResourceMetrics().AppendEmpty()
				rm.Resource().CopyTo(out.Resource())
				out.SetSchemaUrl(rm.SchemaUrl())
				byOwner[o] = out
				w.owners = append(w.owners, o)
				lastScope[o] = -1
			}
			if lastScope[o] != si {
				ns := out.ScopeMetrics().AppendEmpty()
				sm.Scope().CopyTo(ns.Scope())
				ns.SetSchemaUrl(sm.SchemaUrl())
				lastScope[o] = si
			}
			m.CopyTo(out.ScopeMetrics().At(out.ScopeMetrics().Len() - 1).Metrics().AppendEmpty())
			w.items[o] += metricPoints(m)
		}
	}
	for o, out := range byOwner {
		md := pmetric.NewMetrics()
		out.CopyTo(md.ResourceMetrics().AppendEmpty())
		w.parts[o], _ = pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	}
	if len(w.owners) == 0 {
		md := pmetric.NewMetrics()
		rm.CopyTo(md.ResourceMetrics().AppendEmpty())
		o := metricOwner(nil)
		w.owners = []int{o}
		w.parts[o], _ = pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	}
	return w
}

// Partitioning metrics by name against pdata, on every shape and encoding.
func TestDifferentialPartitionByMetricName(t *testing.T) {
	forEachCase(t, 3, func(t *testing.T, sig Signal, _ encoding, b []byte, _ decoded, _ []byte) {
		var scratch PartitionScratch
		ri := 0
		for rd, err := range NewRequest(sig, b).Resources() {
			if err != nil {
				t.Fatal(err)
			}
			parts := PartitionByMetricName(rd, metricOwner, &scratch)
			if sig != SignalMetrics {
				for _, err := range parts {
					if !errors.Is(err, ErrWrongSignal) {
						t.Fatalf("%v: %v, want ErrWrongSignal", sig, err)
					}
				}
				continue
			}
			w := expectedMetrics(t, b, ri)
			var owners []int
			for p, err := range parts {
				if err != nil {
					t.Fatal(err)
				}
				owners = append(owners, p.Owner)
				req := pmetricotlp.NewExportRequest()
				if err := req.UnmarshalProto(p.Request); err != nil {
					t.Fatalf("pdata rejects a part: %v", err)
				}
				got, _ := req.MarshalProto()
				if !bytes.Equal(got, w.parts[p.Owner]) {
					t.Fatalf("resource %d, owner %d: the part differs from pdata's", ri, p.Owner)
				}
				if p.ItemCount != w.items[p.Owner] {
					t.Fatalf("resource %d, owner %d: ItemCount %d, pdata %d", ri, p.Owner, p.ItemCount, w.items[p.Owner])
				}
			}
			if !slices.Equal(owners, w.owners) {
				t.Fatalf("resource %d: owners %v, pdata %v", ri, owners, w.owners)
			}
			ri++
		}
	})
}

// pointsOf returns, for each data point of m in order, its attributes, and
// a function that keeps only the points for which keep(i) is true.
func pointsOf(m pmetric.Metric) (attrs []pcommon.Map, filter func(keep func(i int) bool)) {
	filterBy := func(n int, remove func(func(int) bool)) func(func(int) bool) {
		return func(keep func(int) bool) {
			i := -1
			remove(func(int) bool { i++; return !keep(i) })
		}
	}
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		for _, p := range m.Gauge().DataPoints().All() {
			attrs = append(attrs, p.Attributes())
		}
		return attrs, filterBy(len(attrs), func(f func(int) bool) {
			m.Gauge().DataPoints().RemoveIf(func(pmetric.NumberDataPoint) bool { return f(0) })
		})
	case pmetric.MetricTypeSum:
		for _, p := range m.Sum().DataPoints().All() {
			attrs = append(attrs, p.Attributes())
		}
		return attrs, filterBy(len(attrs), func(f func(int) bool) {
			m.Sum().DataPoints().RemoveIf(func(pmetric.NumberDataPoint) bool { return f(0) })
		})
	case pmetric.MetricTypeHistogram:
		for _, p := range m.Histogram().DataPoints().All() {
			attrs = append(attrs, p.Attributes())
		}
		return attrs, filterBy(len(attrs), func(f func(int) bool) {
			m.Histogram().DataPoints().RemoveIf(func(pmetric.HistogramDataPoint) bool { return f(0) })
		})
	case pmetric.MetricTypeExponentialHistogram:
		for _, p := range m.ExponentialHistogram().DataPoints().All() {
			attrs = append(attrs, p.Attributes())
		}
		return attrs, filterBy(len(attrs), func(f func(int) bool) {
			m.ExponentialHistogram().DataPoints().RemoveIf(func(pmetric.ExponentialHistogramDataPoint) bool { return f(0) })
		})
	case pmetric.MetricTypeSummary:
		for _, p := range m.Summary().DataPoints().All() {
			attrs = append(attrs, p.Attributes())
		}
		return attrs, filterBy(len(attrs), func(f func(int) bool) {
			m.Summary().DataPoints().RemoveIf(func(pmetric.SummaryDataPoint) bool { return f(0) })
		})
	}
	return nil, func(func(int) bool) {}
}

// streamOf names a stream as the tests see it: scope name and version,
// metric name and the point's attributes.
func streamOf(sc pcommon.InstrumentationScope, m pmetric.Metric, attrs pcommon.Map) string {
	raw := attrs.AsRaw()
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s := sc.Name() + "\x00" + sc.Version() + "\x00" + m.Name()
	for _, k := range keys {
		s += fmt.Sprintf("\x00%s=%v", k, raw[k])
	}
	return s
}

// Partitioning metrics by stream against pdata: every point of a stream
// goes to one owner (learnt from the parts), and each part equals what
// pdata builds by keeping, per metric, that owner's points under the
// metric's envelope.
func TestDifferentialPartitionByStream(t *testing.T) {
	splitMetrics := 0 // metrics whose points went to more than one owner
	defer func() {
		if splitMetrics == 0 {
			t.Error("no metric had its points split between owners: the attributes do not reach the stream")
		}
	}()
	forEachCase(t, 3, func(t *testing.T, sig Signal, _ encoding, b []byte, _ decoded, _ []byte) {
		if sig != SignalMetrics {
			for rd := range NewRequest(sig, b).Resources() {
				for _, err := range PartitionByStream(rd, func(uint64) int { return 0 }, new(PartitionScratch)) {
					if !errors.Is(err, ErrWrongSignal) {
						t.Fatalf("%v: %v, want ErrWrongSignal", sig, err)
					}
				}
			}
			return
		}
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		var scratch PartitionScratch
		ri := 0
		for rd, err := range NewRequest(sig, b).Resources() {
			if err != nil {
				t.Fatal(err)
			}
			owner := map[string]int{}
			parts := map[int][]byte{}
			counts := map[int]int{}
			var owners []int
			for p, err := range PartitionByStream(rd, func(s uint64) int { return int(s % 3) }, &scratch) {
				if err != nil {
					t.Fatal(err)
				}
				owners = append(owners, p.Owner)
				parts[p.Owner] = remarshalMetrics(t, p.Request)
				counts[p.Owner] = p.ItemCount
				got := pmetricotlp.NewExportRequest()
				if err := got.UnmarshalProto(p.Request); err != nil {
					t.Fatal(err)
				}
				for _, sm := range got.Metrics().ResourceMetrics().At(0).ScopeMetrics().All() {
					for _, m := range sm.Metrics().All() {
						attrs, _ := pointsOf(m)
						if len(attrs) == 0 {
							attrs = []pcommon.Map{pcommon.NewMap()}
						}
						for _, a := range attrs {
							id := streamOf(sm.Scope(), m, a)
							if o, ok := owner[id]; ok && o != p.Owner {
								t.Fatalf("stream %q at owners %d and %d", id, o, p.Owner)
							}
							owner[id] = p.Owner
						}
					}
				}
			}
			// What pdata builds from the same ownership.
			rm := req.Metrics().ResourceMetrics().At(ri)
			want := map[int]pmetric.Metrics{}
			wantCount := map[int]int{}
			for _, sm := range rm.ScopeMetrics().All() {
				added := map[int]pmetric.ScopeMetrics{}
				for _, m := range sm.Metrics().All() {
					attrs, _ := pointsOf(m)
					byOwner := map[int]bool{}
					if len(attrs) == 0 {
						byOwner[owner[streamOf(sm.Scope(), m, pcommon.NewMap())]] = true
					}
					for _, a := range attrs {
						byOwner[owner[streamOf(sm.Scope(), m, a)]] = true
					}
					if len(byOwner) > 1 {
						splitMetrics++
					}
					for _, o := range owners {
						if !byOwner[o] {
							continue
						}
						md, ok := want[o]
						if !ok {
							md = pmetric.NewMetrics()
							out := md.ResourceMetrics().AppendEmpty()
							rm.Resource().CopyTo(out.Resource())
							out.SetSchemaUrl(rm.SchemaUrl())
							want[o] = md
						}
						ns, ok := added[o]
						if !ok {
							ns = md.ResourceMetrics().At(0).ScopeMetrics().AppendEmpty()
							sm.Scope().CopyTo(ns.Scope())
							ns.SetSchemaUrl(sm.SchemaUrl())
							added[o] = ns
						}
						nm := ns.Metrics().AppendEmpty()
						m.CopyTo(nm)
						_, filter := pointsOf(nm)
						filter(func(i int) bool { return owner[streamOf(sm.Scope(), m, attrs[i])] == o })
						wantCount[o] += metricPoints(nm)
					}
				}
			}
			if len(want) == 0 {
				// No metric at all: the resource goes whole to owner(0).
				md := pmetric.NewMetrics()
				rm.CopyTo(md.ResourceMetrics().AppendEmpty())
				want[0] = md
			}
			for _, o := range owners {
				w, _ := pmetricotlp.NewExportRequestFromMetrics(want[o]).MarshalProto()
				if !bytes.Equal(parts[o], w) {
					t.Fatalf("resource %d, owner %d: the part differs from pdata's", ri, o)
				}
				if counts[o] != wantCount[o] {
					t.Fatalf("resource %d, owner %d: ItemCount %d, pdata %d", ri, o, counts[o], wantCount[o])
				}
			}
			if len(owners) != len(want) {
				t.Fatalf("resource %d: %d parts, pdata %d", ri, len(owners), len(want))
			}
			ri++
		}
	})
}

func remarshalMetrics(t *testing.T, b []byte) []byte {
	t.Helper()
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		t.Fatalf("pdata rejects a part: %v", err)
	}
	out, err := req.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return out
}
