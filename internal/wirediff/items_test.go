// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"iter"
	"math"
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

// must returns a function that fails the test on err and returns v; it is
// called as must(x.Field())(t), since a multi-value call must stand alone.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, pdata %v", what, got, want)
	}
}

// eqFloat compares bit patterns, so NaN and -0 compare as pdata stores them.
func eqFloat(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("%s = %v, pdata %v", what, got, want)
	}
}

func eqBytes(t *testing.T, what string, got []byte, err error, want string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if string(got) != want {
		t.Fatalf("%s = %q, pdata %q", what, got, want)
	}
}

// checkAttrs compares an attribute iterator, entry by entry (duplicate keys
// included), and the lookup (first occurrence) with a pdata map.
func checkAttrs(t *testing.T, seq iter.Seq2[KeyValue, error], get func(string) (Value, bool, error), m pcommon.Map) {
	t.Helper()
	next, stop := iter.Pull2(m.All())
	defer stop()
	n := 0
	for kv, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		pk, pv, ok := next()
		if !ok || pk != kv.Key() {
			t.Fatalf("attribute %d is %q, pdata %q (present %v)", n, kv.Key(), pk, ok)
		}
		checkValue(t, must(kv.Value())(t), pv)
		if get != nil {
			v, found, err := get(kv.Key())
			first, _ := m.Get(kv.Key())
			if err != nil || !found {
				t.Fatalf("Attribute(%q) = %v, %v", kv.Key(), found, err)
			}
			checkValue(t, v, first)
		}
		n++
	}
	if n != m.Len() {
		t.Fatalf("%d attributes, pdata has %d", n, m.Len())
	}
	if _, has := m.Get("no.such.key"); get != nil && !has {
		if _, found, err := get("no.such.key"); found || err != nil {
			t.Fatalf("Attribute(missing) = %v, %v", found, err)
		}
	}
}

func collect[T any](t *testing.T, seq iter.Seq2[T, error]) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// walkScopes pairs every ScopeData of a request with its index path.
func walkScopes(t *testing.T, sig Signal, b []byte, fn func(i, j int, sd ScopeData)) {
	t.Helper()
	i := 0
	for rd, err := range NewRequest(sig, b).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		j := 0
		for sd, err := range rd.Scopes() {
			if err != nil {
				t.Fatal(err)
			}
			fn(i, j, sd)
			j++
		}
		i++
	}
}

// itemStats says what a comparison covered, so tests can insist that the
// generated data exercises every view.
type itemStats struct {
	items, events, links, exemplars int
	bodies                          map[pcommon.ValueType]bool
	metricTypes                     map[MetricType]bool
}

// compareItems walks every item of b (which pdata's receivers must accept)
// with the views and compares each exposed field with pdata's getters.
func compareItems(t *testing.T, sig Signal, b []byte, st *itemStats) {
	t.Helper()
	if st.bodies == nil {
		st.bodies = map[pcommon.ValueType]bool{}
		st.metricTypes = map[MetricType]bool{}
	}
	switch sig {
	case SignalTraces:
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		td := req.Traces()
		seen := 0
		walkScopes(t, sig, b, func(i, j int, sd ScopeData) {
			want := td.ResourceSpans().At(i).ScopeSpans().At(j).Spans()
			spans := collect(t, sd.Spans())
			eq(t, "spans", len(spans), want.Len())
			for k, sp := range spans {
				checkSpan(t, sp, want.At(k))
				st.events += want.At(k).Events().Len()
				st.links += want.At(k).Links().Len()
				seen++
			}
		})
		eq(t, "spans walked", seen, td.SpanCount())
		st.items += seen
	case SignalLogs:
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		ld := req.Logs()
		seen := 0
		walkScopes(t, sig, b, func(i, j int, sd ScopeData) {
			want := ld.ResourceLogs().At(i).ScopeLogs().At(j).LogRecords()
			records := collect(t, sd.LogRecords())
			eq(t, "log records", len(records), want.Len())
			for k, lr := range records {
				checkLogRecord(t, lr, want.At(k))
				st.bodies[want.At(k).Body().Type()] = true
				seen++
			}
		})
		eq(t, "log records walked", seen, ld.LogRecordCount())
		st.items += seen
	case SignalMetrics:
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		md := req.Metrics()
		points := 0
		walkScopes(t, sig, b, func(i, j int, sd ScopeData) {
			want := md.ResourceMetrics().At(i).ScopeMetrics().At(j).Metrics()
			metrics := collect(t, sd.Metrics())
			eq(t, "metrics", len(metrics), want.Len())
			for k, m := range metrics {
				st.metricTypes[must(m.Type())(t)] = true
				points += checkMetric(t, m, want.At(k))
				st.exemplars += countExemplars(want.At(k))
			}
		})
		eq(t, "data points walked", points, md.DataPointCount())
		st.items += points
	}
}

func TestDifferentialSpans(t *testing.T) {
	var st itemStats
	forEachCase(t, 2, func(t *testing.T, sig Signal, _ encoding, b []byte, _ decoded, _ []byte) {
		if sig == SignalTraces {
			compareItems(t, sig, b, &st)
		}
	})
	if st.items == 0 || st.events == 0 || st.links == 0 {
		t.Fatalf("compared %d spans, %d events and %d links; the comparison needs all", st.items, st.events, st.links)
	}
}

func checkSpan(t *testing.T, sp Span, w ptrace.Span) {
	t.Helper()
	eq(t, "TraceID", must(sp.TraceID())(t), [16]byte(w.TraceID()))
	eq(t, "SpanID", must(sp.SpanID())(t), [8]byte(w.SpanID()))
	eq(t, "ParentSpanID", must(sp.ParentSpanID())(t), [8]byte(w.ParentSpanID()))
	ts, err := sp.TraceState()
	eqBytes(t, "TraceState", ts, err, w.TraceState().AsRaw())
	name, err := sp.Name()
	eqBytes(t, "Name", name, err, w.Name())
	eq(t, "Kind", must(sp.Kind())(t), int32(w.Kind()))
	eq(t, "StartTimeUnixNano", must(sp.StartTimeUnixNano())(t), uint64(w.StartTimestamp()))
	eq(t, "EndTimeUnixNano", must(sp.EndTimeUnixNano())(t), uint64(w.EndTimestamp()))
	checkAttrs(t, sp.Attributes(), sp.Attribute, w.Attributes())
	eq(t, "DroppedAttributesCount", must(sp.DroppedAttributesCount())(t), w.DroppedAttributesCount())
	eq(t, "DroppedEventsCount", must(sp.DroppedEventsCount())(t), w.DroppedEventsCount())
	eq(t, "DroppedLinksCount", must(sp.DroppedLinksCount())(t), w.DroppedLinksCount())
	eq(t, "Flags", must(sp.Flags())(t), w.Flags())
	st := must(sp.Status())(t)
	eq(t, "Status.Code", st.Code, int32(w.Status().Code()))
	eqBytes(t, "Status.Message", st.Message, nil, w.Status().Message())

	events := collect(t, sp.Events())
	eq(t, "events", len(events), w.Events().Len())
	for i, ev := range events {
		we := w.Events().At(i)
		eq(t, "Event.TimeUnixNano", must(ev.TimeUnixNano())(t), uint64(we.Timestamp()))
		name, err := ev.Name()
		eqBytes(t, "Event.Name", name, err, we.Name())
		checkAttrs(t, ev.Attributes(), ev.Attribute, we.Attributes())
		eq(t, "Event.DroppedAttributesCount", must(ev.DroppedAttributesCount())(t), we.DroppedAttributesCount())
	}
	links := collect(t, sp.Links())
	eq(t, "links", len(links), w.Links().Len())
	for i, l := range links {
		wl := w.Links().At(i)
		eq(t, "Link.TraceID", must(l.TraceID())(t), [16]byte(wl.TraceID()))
		eq(t, "Link.SpanID", must(l.SpanID())(t), [8]byte(wl.SpanID()))
		ts, err := l.TraceState()
		eqBytes(t, "Link.TraceState", ts, err, wl.TraceState().AsRaw())
		checkAttrs(t, l.Attributes(), l.Attribute, wl.Attributes())
		eq(t, "Link.DroppedAttributesCount", must(l.DroppedAttributesCount())(t), wl.DroppedAttributesCount())
		eq(t, "Link.Flags", must(l.Flags())(t), wl.Flags())
	}
}

func TestDifferentialLogRecords(t *testing.T) {
	var st itemStats
	forEachCase(t, 2, func(t *testing.T, sig Signal, _ encoding, b []byte, _ decoded, _ []byte) {
		if sig == SignalLogs {
			compareItems(t, sig, b, &st)
		}
	})
	if len(st.bodies) != 8 {
		t.Fatalf("log bodies of %d kinds compared, want all 8", len(st.bodies))
	}
}

func checkLogRecord(t *testing.T, lr LogRecord, w plog.LogRecord) {
	t.Helper()
	eq(t, "TimeUnixNano", must(lr.TimeUnixNano())(t), uint64(w.Timestamp()))
	eq(t, "ObservedTimeUnixNano", must(lr.ObservedTimeUnixNano())(t), uint64(w.ObservedTimestamp()))
	eq(t, "SeverityNumber", must(lr.SeverityNumber())(t), int32(w.SeverityNumber()))
	st, err := lr.SeverityText()
	eqBytes(t, "SeverityText", st, err, w.SeverityText())
	checkValue(t, must(lr.Body())(t), w.Body())
	checkAttrs(t, lr.Attributes(), lr.Attribute, w.Attributes())
	eq(t, "DroppedAttributesCount", must(lr.DroppedAttributesCount())(t), w.DroppedAttributesCount())
	eq(t, "Flags", must(lr.Flags())(t), uint32(w.Flags()))
	eq(t, "TraceID", must(lr.TraceID())(t), [16]byte(w.TraceID()))
	eq(t, "SpanID", must(lr.SpanID())(t), [8]byte(w.SpanID()))
	en, err := lr.EventName()
	eqBytes(t, "EventName", en, err, w.EventName())
}

func TestDifferentialMetrics(t *testing.T) {
	var st itemStats
	forEachCase(t, 2, func(t *testing.T, sig Signal, _ encoding, b []byte, _ decoded, _ []byte) {
		if sig == SignalMetrics {
			compareItems(t, sig, b, &st)
		}
	})
	if st.exemplars == 0 {
		t.Error("no exemplar was compared")
	}
	for typ := MetricTypeEmpty; typ <= MetricTypeSummary; typ++ {
		if !st.metricTypes[typ] {
			t.Errorf("no %v metric was compared", typ)
		}
	}
}

// checkMetric compares one metric and returns how many points it walked.
func checkMetric(t *testing.T, m Metric, w pmetric.Metric) int {
	t.Helper()
	name, err := m.Name()
	eqBytes(t, "Name", name, err, w.Name())
	desc, err := m.Description()
	eqBytes(t, "Description", desc, err, w.Description())
	unit, err := m.Unit()
	eqBytes(t, "Unit", unit, err, w.Unit())
	checkAttrs(t, m.Metadata(), nil, w.Metadata())
	typ := must(m.Type())(t)
	eq(t, "Type", uint8(typ), uint8(w.Type()))
	eq(t, "Type.String", typ.String(), w.Type().String())
	eq(t, "DataPointCount", must(m.DataPointCount())(t), metricPoints(w))

	var temporality pmetric.AggregationTemporality
	monotonic := false
	switch w.Type() {
	case pmetric.MetricTypeSum:
		temporality, monotonic = w.Sum().AggregationTemporality(), w.Sum().IsMonotonic()
	case pmetric.MetricTypeHistogram:
		temporality = w.Histogram().AggregationTemporality()
	case pmetric.MetricTypeExponentialHistogram:
		temporality = w.ExponentialHistogram().AggregationTemporality()
	}
	eq(t, "AggregationTemporality", must(m.AggregationTemporality())(t), int32(temporality))
	eq(t, "IsMonotonic", must(m.IsMonotonic())(t), monotonic)

	number := collect(t, m.NumberDataPoints())
	hist := collect(t, m.HistogramDataPoints())
	exp := collect(t, m.ExponentialHistogramDataPoints())
	summary := collect(t, m.SummaryDataPoints())
	walked := len(number) + len(hist) + len(exp) + len(summary)
	eq(t, "points walked", walked, metricPoints(w))
	switch w.Type() {
	case pmetric.MetricTypeGauge, pmetric.MetricTypeSum:
		var dps pmetric.NumberDataPointSlice
		if w.Type() == pmetric.MetricTypeSum {
			dps = w.Sum().DataPoints()
		} else {
			dps = w.Gauge().DataPoints()
		}
		for i, p := range number {
			checkNumberPoint(t, p, dps.At(i))
		}
	case pmetric.MetricTypeHistogram:
		for i, p := range hist {
			checkHistogramPoint(t, p, w.Histogram().DataPoints().At(i))
		}
	case pmetric.MetricTypeExponentialHistogram:
		for i, p := range exp {
			checkExpPoint(t, p, w.ExponentialHistogram().DataPoints().At(i))
		}
	case pmetric.MetricTypeSummary:
		for i, p := range summary {
			checkSummaryPoint(t, p, w.Summary().DataPoints().At(i))
		}
	}
	return walked
}

func checkNumberPoint(t *testing.T, p NumberDataPoint, w pmetric.NumberDataPoint) {
	t.Helper()
	eq(t, "StartTimeUnixNano", must(p.StartTimeUnixNano())(t), uint64(w.StartTimestamp()))
	eq(t, "TimeUnixNano", must(p.TimeUnixNano())(t), uint64(w.Timestamp()))
	vt := must(p.ValueType())(t)
	eq(t, "ValueType", uint8(vt), uint8(w.ValueType()))
	eq(t, "ValueType.String", vt.String(), w.ValueType().String())
	eqFloat(t, "DoubleValue", must(p.DoubleValue())(t), w.DoubleValue())
	eq(t, "IntValue", must(p.IntValue())(t), w.IntValue())
	checkAttrs(t, p.Attributes(), p.Attribute, w.Attributes())
	eq(t, "Flags", must(p.Flags())(t), uint32(w.Flags()))
	checkExemplars(t, p.Exemplars(), w.Exemplars())
}

func checkExemplars(t *testing.T, seq iter.Seq2[Exemplar, error], w pmetric.ExemplarSlice) {
	t.Helper()
	ex := collect(t, seq)
	eq(t, "exemplars", len(ex), w.Len())
	for i, e := range ex {
		we := w.At(i)
		eq(t, "Exemplar.TimeUnixNano", must(e.TimeUnixNano())(t), uint64(we.Timestamp()))
		eq(t, "Exemplar.ValueType", uint8(must(e.ValueType())(t)), uint8(we.ValueType()))
		eqFloat(t, "Exemplar.DoubleValue", must(e.DoubleValue())(t), we.DoubleValue())
		eq(t, "Exemplar.IntValue", must(e.IntValue())(t), we.IntValue())
		eq(t, "Exemplar.TraceID", must(e.TraceID())(t), [16]byte(we.TraceID()))
		eq(t, "Exemplar.SpanID", must(e.SpanID())(t), [8]byte(we.SpanID()))
		checkAttrs(t, e.FilteredAttributes(), nil, we.FilteredAttributes())
	}
}

func checkOptional(t *testing.T, what string, got float64, has bool, err error, want float64, wantHas bool) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	eq(t, what+" present", has, wantHas)
	if has {
		eqFloat(t, what, got, want)
	}
}

func checkHistogramPoint(t *testing.T, p HistogramDataPoint, w pmetric.HistogramDataPoint) {
	t.Helper()
	eq(t, "StartTimeUnixNano", must(p.StartTimeUnixNano())(t), uint64(w.StartTimestamp()))
	eq(t, "TimeUnixNano", must(p.TimeUnixNano())(t), uint64(w.Timestamp()))
	eq(t, "Count", must(p.Count())(t), w.Count())
	sum, has, err := p.Sum()
	checkOptional(t, "Sum", sum, has, err, w.Sum(), w.HasSum())
	lo, has, err := p.Min()
	checkOptional(t, "Min", lo, has, err, w.Min(), w.HasMin())
	hi, has, err := p.Max()
	checkOptional(t, "Max", hi, has, err, w.Max(), w.HasMax())
	counts := collect(t, p.BucketCounts())
	if got, want := counts, w.BucketCounts().AsRaw(); len(got) != len(want) || (len(got) > 0 && !equalU64(got, want)) {
		t.Fatalf("BucketCounts = %v, pdata %v", got, want)
	}
	bounds := collect(t, p.ExplicitBounds())
	eq(t, "ExplicitBounds length", len(bounds), w.ExplicitBounds().Len())
	for i, b := range bounds {
		eqFloat(t, "ExplicitBounds", b, w.ExplicitBounds().At(i))
	}
	checkAttrs(t, p.Attributes(), p.Attribute, w.Attributes())
	eq(t, "Flags", must(p.Flags())(t), uint32(w.Flags()))
	checkExemplars(t, p.Exemplars(), w.Exemplars())
}

func equalU64(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func checkExpPoint(t *testing.T, p ExponentialHistogramDataPoint, w pmetric.ExponentialHistogramDataPoint) {
	t.Helper()
	checkAttrs(t, p.Attributes(), p.Attribute, w.Attributes())
	eq(t, "StartTimeUnixNano", must(p.StartTimeUnixNano())(t), uint64(w.StartTimestamp()))
	eq(t, "TimeUnixNano", must(p.TimeUnixNano())(t), uint64(w.Timestamp()))
	eq(t, "Count", must(p.Count())(t), w.Count())
	sum, has, err := p.Sum()
	checkOptional(t, "Sum", sum, has, err, w.Sum(), w.HasSum())
	eq(t, "Scale", must(p.Scale())(t), w.Scale())
	eq(t, "ZeroCount", must(p.ZeroCount())(t), w.ZeroCount())
	eqFloat(t, "ZeroThreshold", must(p.ZeroThreshold())(t), w.ZeroThreshold())
	for _, side := range []struct {
		name string
		got  ExponentialBuckets
		want pmetric.ExponentialHistogramDataPointBuckets
	}{{"Positive", p.Positive(), w.Positive()}, {"Negative", p.Negative(), w.Negative()}} {
		eq(t, side.name+".Offset", must(side.got.Offset())(t), side.want.Offset())
		counts := collect(t, side.got.BucketCounts())
		if want := side.want.BucketCounts().AsRaw(); len(counts) != len(want) || !equalU64(counts, want) {
			t.Fatalf("%s.BucketCounts = %v, pdata %v", side.name, counts, want)
		}
	}
	eq(t, "Flags", must(p.Flags())(t), uint32(w.Flags()))
	lo, has, err := p.Min()
	checkOptional(t, "Min", lo, has, err, w.Min(), w.HasMin())
	hi, has, err := p.Max()
	checkOptional(t, "Max", hi, has, err, w.Max(), w.HasMax())
	checkExemplars(t, p.Exemplars(), w.Exemplars())
}

func checkSummaryPoint(t *testing.T, p SummaryDataPoint, w pmetric.SummaryDataPoint) {
	t.Helper()
	eq(t, "StartTimeUnixNano", must(p.StartTimeUnixNano())(t), uint64(w.StartTimestamp()))
	eq(t, "TimeUnixNano", must(p.TimeUnixNano())(t), uint64(w.Timestamp()))
	eq(t, "Count", must(p.Count())(t), w.Count())
	eqFloat(t, "Sum", must(p.Sum())(t), w.Sum())
	qs := collect(t, p.QuantileValues())
	eq(t, "quantiles", len(qs), w.QuantileValues().Len())
	for i, q := range qs {
		eqFloat(t, "Quantile", q.Quantile, w.QuantileValues().At(i).Quantile())
		eqFloat(t, "Value", q.Value, w.QuantileValues().At(i).Value())
	}
	checkAttrs(t, p.Attributes(), p.Attribute, w.Attributes())
	eq(t, "Flags", must(p.Flags())(t), uint32(w.Flags()))
}

func countExemplars(m pmetric.Metric) int {
	n := 0
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		for _, dp := range m.Gauge().DataPoints().All() {
			n += dp.Exemplars().Len()
		}
	case pmetric.MetricTypeSum:
		for _, dp := range m.Sum().DataPoints().All() {
			n += dp.Exemplars().Len()
		}
	case pmetric.MetricTypeHistogram:
		for _, dp := range m.Histogram().DataPoints().All() {
			n += dp.Exemplars().Len()
		}
	case pmetric.MetricTypeExponentialHistogram:
		for _, dp := range m.ExponentialHistogram().DataPoints().All() {
			n += dp.Exemplars().Len()
		}
	}
	return n
}
