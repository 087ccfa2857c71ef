// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
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

	"github.com/otelcol-sdp/otelcol-sdp/internal/sdkenc"
	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// decoded is what pdata makes of a request, read the way the OTLP receivers
// read it (ExportRequest.UnmarshalProto, which migrates field 1000).
type decoded struct {
	count          int
	resources      []pcommon.Resource
	resourceCounts []int
	scopeCounts    [][]int
	json           string
	flat           []string // one entry per item (or empty container), in order
}

func decode(sig Signal, b []byte) (decoded, error) {
	switch sig {
	case SignalTraces:
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			return decoded{}, err
		}
		return decodeTraces(req.Traces()), nil
	case SignalMetrics:
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			return decoded{}, err
		}
		return decodeMetrics(req.Metrics()), nil
	default:
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			return decoded{}, err
		}
		return decodeLogs(req.Logs()), nil
	}
}

func decodeTraces(td ptrace.Traces) decoded {
	d := decoded{count: td.SpanCount()}
	j, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	d.json = string(j)
	for _, rs := range td.ResourceSpans().All() {
		d.resources = append(d.resources, rs.Resource())
		var n int
		var sc []int
		one := func(fill func(ptrace.ResourceSpans)) {
			t := ptrace.NewTraces()
			r := t.ResourceSpans().AppendEmpty()
			rs.Resource().CopyTo(r.Resource())
			r.SetSchemaUrl(rs.SchemaUrl())
			fill(r)
			j, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(t)
			d.flat = append(d.flat, string(j))
		}
		if rs.ScopeSpans().Len() == 0 {
			one(func(ptrace.ResourceSpans) {})
		}
		for _, ss := range rs.ScopeSpans().All() {
			n += ss.Spans().Len()
			sc = append(sc, ss.Spans().Len())
			scope := func(r ptrace.ResourceSpans) ptrace.ScopeSpans {
				s := r.ScopeSpans().AppendEmpty()
				ss.Scope().CopyTo(s.Scope())
				s.SetSchemaUrl(ss.SchemaUrl())
				return s
			}
			if ss.Spans().Len() == 0 {
				one(func(r ptrace.ResourceSpans) { scope(r) })
			}
			for _, sp := range ss.Spans().All() {
				one(func(r ptrace.ResourceSpans) { sp.CopyTo(scope(r).Spans().AppendEmpty()) })
			}
		}
		d.resourceCounts = append(d.resourceCounts, n)
		d.scopeCounts = append(d.scopeCounts, sc)
	}
	return d
}

func decodeLogs(ld plog.Logs) decoded {
	d := decoded{count: ld.LogRecordCount()}
	j, _ := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	d.json = string(j)
	for _, rl := range ld.ResourceLogs().All() {
		d.resources = append(d.resources, rl.Resource())
		var n int
		var sc []int
		one := func(fill func(plog.ResourceLogs)) {
			t := plog.NewLogs()
			r := t.ResourceLogs().AppendEmpty()
			rl.Resource().CopyTo(r.Resource())
			r.SetSchemaUrl(rl.SchemaUrl())
			fill(r)
			j, _ := (&plog.JSONMarshaler{}).MarshalLogs(t)
			d.flat = append(d.flat, string(j))
		}
		if rl.ScopeLogs().Len() == 0 {
			one(func(plog.ResourceLogs) {})
		}
		for _, sl := range rl.ScopeLogs().All() {
			n += sl.LogRecords().Len()
			sc = append(sc, sl.LogRecords().Len())
			scope := func(r plog.ResourceLogs) plog.ScopeLogs {
				s := r.ScopeLogs().AppendEmpty()
				sl.Scope().CopyTo(s.Scope())
				s.SetSchemaUrl(sl.SchemaUrl())
				return s
			}
			if sl.LogRecords().Len() == 0 {
				one(func(r plog.ResourceLogs) { scope(r) })
			}
			for _, lr := range sl.LogRecords().All() {
				one(func(r plog.ResourceLogs) { lr.CopyTo(scope(r).LogRecords().AppendEmpty()) })
			}
		}
		d.resourceCounts = append(d.resourceCounts, n)
		d.scopeCounts = append(d.scopeCounts, sc)
	}
	return d
}

// The expected counts come from pdata's own DataPointCount, applied to a
// copy holding only the metric, scope or resource counted, so that they do
// not share code with any counter under test.

// metricPoints returns the data points of m, as pdata counts them.
func metricPoints(m pmetric.Metric) int {
	md := pmetric.NewMetrics()
	m.CopyTo(md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty())
	return md.DataPointCount()
}

// scopePoints returns the data points of sm, as pdata counts them.
func scopePoints(sm pmetric.ScopeMetrics) int {
	md := pmetric.NewMetrics()
	sm.CopyTo(md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty())
	return md.DataPointCount()
}

// resourcePoints returns the data points of rm, as pdata counts them.
func resourcePoints(rm pmetric.ResourceMetrics) int {
	md := pmetric.NewMetrics()
	rm.CopyTo(md.ResourceMetrics().AppendEmpty())
	return md.DataPointCount()
}

// keepPoint removes every data point of m but the i-th.
func keepPoint(m pmetric.Metric, i int) {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		k := 0
		m.Gauge().DataPoints().RemoveIf(func(pmetric.NumberDataPoint) bool { k++; return k-1 != i })
	case pmetric.MetricTypeSum:
		k := 0
		m.Sum().DataPoints().RemoveIf(func(pmetric.NumberDataPoint) bool { k++; return k-1 != i })
	case pmetric.MetricTypeHistogram:
		k := 0
		m.Histogram().DataPoints().RemoveIf(func(pmetric.HistogramDataPoint) bool { k++; return k-1 != i })
	case pmetric.MetricTypeExponentialHistogram:
		k := 0
		m.ExponentialHistogram().DataPoints().RemoveIf(func(pmetric.ExponentialHistogramDataPoint) bool { k++; return k-1 != i })
	case pmetric.MetricTypeSummary:
		k := 0
		m.Summary().DataPoints().RemoveIf(func(pmetric.SummaryDataPoint) bool { k++; return k-1 != i })
	}
}

func decodeMetrics(md pmetric.Metrics) decoded {
	d := decoded{count: md.DataPointCount()}
	j, _ := (&pmetric.JSONMarshaler{}).MarshalMetrics(md)
	d.json = string(j)
	for _, rm := range md.ResourceMetrics().All() {
		d.resources = append(d.resources, rm.Resource())
		var sc []int
		one := func(fill func(pmetric.ResourceMetrics)) {
			t := pmetric.NewMetrics()
			r := t.ResourceMetrics().AppendEmpty()
			rm.Resource().CopyTo(r.Resource())
			r.SetSchemaUrl(rm.SchemaUrl())
			fill(r)
			j, _ := (&pmetric.JSONMarshaler{}).MarshalMetrics(t)
			d.flat = append(d.flat, string(j))
		}
		if rm.ScopeMetrics().Len() == 0 {
			one(func(pmetric.ResourceMetrics) {})
		}
		for _, sm := range rm.ScopeMetrics().All() {
			scope := func(r pmetric.ResourceMetrics) pmetric.ScopeMetrics {
				s := r.ScopeMetrics().AppendEmpty()
				sm.Scope().CopyTo(s.Scope())
				s.SetSchemaUrl(sm.SchemaUrl())
				return s
			}
			if sm.Metrics().Len() == 0 {
				one(func(r pmetric.ResourceMetrics) { scope(r) })
			}
			for _, m := range sm.Metrics().All() {
				p := metricPoints(m)
				if p == 0 {
					one(func(r pmetric.ResourceMetrics) { m.CopyTo(scope(r).Metrics().AppendEmpty()) })
				}
				for i := range p {
					one(func(r pmetric.ResourceMetrics) {
						dst := scope(r).Metrics().AppendEmpty()
						m.CopyTo(dst)
						keepPoint(dst, i)
					})
				}
			}
			sc = append(sc, scopePoints(sm))
		}
		d.resourceCounts = append(d.resourceCounts, resourcePoints(rm))
		d.scopeCounts = append(d.scopeCounts, sc)
	}
	return d
}

// batch is one generated request in its pdata encoding, with a way to
// produce the hand-written encodings of the same data.
type batch struct {
	sig  Signal
	b    []byte
	hand func(sdkenc.Options) []byte
}

func genBatch(sig Signal, seed uint64, sh shape) batch {
	switch sig {
	case SignalTraces:
		td := genTraces(seed, sh)
		b, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		return batch{sig, b, func(o sdkenc.Options) []byte { return sdkenc.Traces(td, o) }}
	case SignalMetrics:
		md := genMetrics(seed, sh)
		b, _ := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
		return batch{sig, b, func(o sdkenc.Options) []byte { return sdkenc.Metrics(md, o) }}
	default:
		ld := genLogs(seed, sh)
		b, _ := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
		return batch{sig, b, func(o sdkenc.Options) []byte { return sdkenc.Logs(ld, o) }}
	}
}

var signals = []Signal{SignalTraces, SignalMetrics, SignalLogs}

var shapes = []shape{
	{resources: 3, scopes: 2, items: 4, attrs: 6},
	{resources: 1, scopes: 1, items: 1, attrs: 1},
	{resources: 2, scopes: 0, items: 0, attrs: 3},
	{resources: 2, scopes: 3, items: 0, attrs: 0},
	{resources: 4, scopes: 1, items: 7, attrs: 10},
}

type encoding struct {
	name string
	opts sdkenc.Options
	pdat bool
}

var encodings = []encoding{
	{name: "pdata", pdat: true},
	{name: "ascending"},
	{name: "ascending-field1000", opts: sdkenc.Options{Deprecated: true}},
	{name: "ascending-decoy1000", opts: sdkenc.Options{Decoy: true}},
	{name: "ascending-reversed-attrs", opts: sdkenc.Options{Reverse: true}},
	{name: "ascending-unpacked", opts: sdkenc.Options{Unpacked: true}},
}

// forEachCase runs fn over every signal, seed, shape and encoding.
func forEachCase(t *testing.T, seeds int, fn func(t *testing.T, sig Signal, enc encoding, b []byte, want decoded, ref []byte)) {
	for _, sig := range signals {
		for seed := range uint64(seeds) {
			for si, sh := range shapes {
				bt := genBatch(sig, seed, sh)
				ref, err := decode(sig, bt.b)
				if err != nil {
					t.Fatal(err)
				}
				for _, enc := range encodings {
					b := bt.b
					if !enc.pdat {
						b = bt.hand(enc.opts)
					}
					t.Run(fmt.Sprintf("%v/seed%d/shape%d/%s", sig, seed, si, enc.name), func(t *testing.T) {
						want, err := decode(sig, b)
						if err != nil {
							t.Fatalf("pdata rejects the test encoding: %v", err)
						}
						if !enc.opts.Reverse && want.json != ref.json {
							t.Fatalf("test encoder disagrees with pdata:\n%s\n%s", want.json, ref.json)
						}
						fn(t, sig, enc, b, want, bt.b)
					})
				}
			}
		}
	}
}

func TestDifferentialCountsAndAttributes(t *testing.T) {
	forEachCase(t, 3, func(t *testing.T, sig Signal, _ encoding, b []byte, want decoded, _ []byte) {
		req := NewRequest(sig, b)
		n, err := req.ItemCount()
		if err != nil || n != want.count {
			t.Fatalf("ItemCount = %d, %v; pdata says %d", n, err, want.count)
		}
		i := 0
		for rd, err := range req.Resources() {
			if err != nil {
				t.Fatal(err)
			}
			if n, err := rd.ItemCount(); err != nil || n != want.resourceCounts[i] {
				t.Fatalf("resource %d: ItemCount = %d, %v; want %d", i, n, err, want.resourceCounts[i])
			}
			var scopeCounts []int
			for sd, err := range rd.Scopes() {
				if err != nil {
					t.Fatal(err)
				}
				n, err := sd.ItemCount()
				if err != nil {
					t.Fatal(err)
				}
				scopeCounts = append(scopeCounts, n)
			}
			if !slices.Equal(scopeCounts, want.scopeCounts[i]) {
				t.Fatalf("resource %d: scope counts %v, pdata %v", i, scopeCounts, want.scopeCounts[i])
			}
			res, err := rd.Resource()
			if err != nil {
				t.Fatal(err)
			}
			checkAttributes(t, res, want.resources[i].Attributes())
			i++
		}
		if i != len(want.resources) {
			t.Fatalf("%d resources, pdata has %d", i, len(want.resources))
		}
	})
}

// checkAttributes compares the wire view of a resource with pdata's map.
func checkAttributes(t *testing.T, res Resource, m pcommon.Map) {
	t.Helper()
	var keys []string
	for kv, err := range res.Attributes() {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, kv.Key())
		pv, ok := m.Get(kv.Key())
		if !ok {
			t.Fatalf("attribute %q not in pdata", kv.Key())
		}
		v, err := kv.Value()
		if err != nil {
			t.Fatal(err)
		}
		checkValue(t, v, pv)
		got, found, err := res.Attribute(kv.Key())
		if err != nil || !found {
			t.Fatalf("Attribute(%q) = %v, %v", kv.Key(), found, err)
		}
		checkValue(t, got, pv)
	}
	if len(keys) != m.Len() {
		t.Fatalf("%d attributes, pdata has %d", len(keys), m.Len())
	}
	if _, found, err := res.Attribute("no.such.key"); found || err != nil {
		t.Fatalf("Attribute(missing) = %v, %v", found, err)
	}
	for _, ver := range []HashVersion{HashV1, HashV2} {
		h, err := res.HashWith(ver)
		if err != nil {
			t.Fatal(err)
		}
		hk, found, err := res.HashKeysWith(ver, append(keys, "no.such.key"))
		if err != nil || found != len(keys) || hk != h {
			t.Fatalf("v%d: HashKeys(all) = %x, %d, %v; Hash = %x", ver, hk, found, err, h)
		}
	}
}

func checkValue(t *testing.T, v Value, pv pcommon.Value) {
	t.Helper()
	if v.Kind() != ValueKind(pv.Type()) {
		t.Fatalf("kind %v, pdata %v", v.Kind(), pv.Type())
	}
	text, err := v.Text(nil)
	if err != nil && !(errors.Is(err, ErrNoText) && pv.AsString() == "") {
		t.Fatalf("Text: %v, pdata AsString = %q", err, pv.AsString())
	}
	if got, want := string(text), pv.AsString(); got != want {
		t.Fatalf("Text = %q, pdata AsString = %q", got, want)
	}
	if got := string(v.AppendText(nil)); got != string(text) {
		t.Fatalf("AppendText = %q, Text = %q", got, text)
	}
	switch pv.Type() {
	case pcommon.ValueTypeSlice:
		i := 0
		for e, err := range v.Slice() {
			if err != nil {
				t.Fatal(err)
			}
			checkValue(t, e, pv.Slice().At(i))
			i++
		}
		if i != pv.Slice().Len() {
			t.Fatalf("slice of %d, pdata %d", i, pv.Slice().Len())
		}
	case pcommon.ValueTypeMap:
		// Entry by entry: kvlists on the wire may repeat keys, and pdata
		// keeps every entry in wire order.
		checkAttrs(t, v.Map(), nil, pv.Map())
	}
}

func TestDifferentialHashIsEncodingIndependent(t *testing.T) {
	forEachCase(t, 2, func(t *testing.T, sig Signal, _ encoding, b []byte, _ decoded, ref []byte) {
		for _, ver := range []HashVersion{HashV1, HashV2} {
			want := resourceHashes(t, sig, ref, ver)
			if got := resourceHashes(t, sig, b, ver); !slices.Equal(got, want) {
				t.Fatalf("v%d: hashes %x, pdata encoding gives %x", ver, got, want)
			}
			if len(want) > 1 && want[0] == want[1] {
				t.Fatalf("v%d: different resources hash equal: %x", ver, want)
			}
		}
	})
}

func resourceHashes(t *testing.T, sig Signal, b []byte, ver HashVersion) []uint64 {
	t.Helper()
	var hs []uint64
	for rd, err := range NewRequest(sig, b).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		res, err := rd.Resource()
		if err != nil {
			t.Fatal(err)
		}
		h, err := res.HashWith(ver)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	return hs
}

func TestDifferentialSplitReassemble(t *testing.T) {
	forEachCase(t, 2, func(t *testing.T, sig Signal, _ encoding, b []byte, want decoded, _ []byte) {
		// The smallest limit still cuts every generated resource between
		// items, and fits the largest span (events and links included) with
		// its resource and scope envelope.
		for _, limit := range []int{1 << 20, 4000, 1800} {
			var all []byte
			var scratch []byte
			for rd, err := range NewRequest(sig, b).Resources() {
				if err != nil {
					t.Fatal(err)
				}
				for c, err := range SplitResource(rd, limit, scratch) {
					if err != nil {
						t.Fatal(err)
					}
					if len(c.Request) > limit {
						t.Fatalf("limit %d: chunk of %d bytes", limit, len(c.Request))
					}
					got, err := decode(sig, c.Request)
					if err != nil {
						t.Fatalf("pdata rejects chunk: %v", err)
					}
					if got.count != c.ItemCount || len(got.resources) != 1 {
						t.Fatalf("chunk ItemCount %d, pdata %d (%d resources)", c.ItemCount, got.count, len(got.resources))
					}
					all = append(all, c.Request...)
					scratch = c.Request[:0]
				}
			}
			got, err := decode(sig, all)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.flat, want.flat) {
				t.Fatalf("limit %d: reassembled data differs: %d items, want %d", limit, len(got.flat), len(want.flat))
			}
		}
	})
}
