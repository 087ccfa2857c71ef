// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

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
	marshal := func(r pmetric.ResourceMetrics) []byte {
		md := pmetric.NewMetrics()
		r.CopyTo(md.ResourceMetrics().AppendEmpty())
		out, _ := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
		return out
	}
	return pdataPartition[pmetric.ResourceMetrics, pmetric.ScopeMetrics, pmetric.Metric]{
		scopes: func() []pmetric.ScopeMetrics { return slices.Collect(valuesOf(rm.ScopeMetrics().All())) },
		items:  func(sm pmetric.ScopeMetrics) []pmetric.Metric { return slices.Collect(valuesOf(sm.Metrics().All())) },
		owner:  func(m pmetric.Metric) int { return metricOwner([]byte(m.Name())) },
		count:  metricPoints,
		newPart: func() pmetric.ResourceMetrics {
			out := pmetric.NewMetrics().ResourceMetrics().AppendEmpty()
			rm.Resource().CopyTo(out.Resource())
			out.SetSchemaUrl(rm.SchemaUrl())
			return out
		},
		addTo: func(out pmetric.ResourceMetrics, sm pmetric.ScopeMetrics) {
			ns := out.ScopeMetrics().AppendEmpty()
			sm.Scope().CopyTo(ns.Scope())
			ns.SetSchemaUrl(sm.SchemaUrl())
		},
		addItem: func(out pmetric.ResourceMetrics, m pmetric.Metric) {
			m.CopyTo(out.ScopeMetrics().At(out.ScopeMetrics().Len() - 1).Metrics().AppendEmpty())
		},
		marshal: marshal,
		whole:   func() (int, []byte) { return metricOwner(nil), marshal(rm) },
	}.want()
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
