// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The details of an item: its fields as pdata reads them, one line per
// item in a fixed format that otlpwire/golden_test.go writes from
// otlpwire's views (the format is only a way to compare many values at
// once; every value in it is pdata's).

func spanDetail(sp ptrace.Span) string {
	var b strings.Builder
	tid, sid, pid := sp.TraceID(), sp.SpanID(), sp.ParentSpanID()
	fmt.Fprintf(&b, "trace=%x span=%x parent=%x state=%q kind=%d start=%d end=%d attrs=%d dropped=%d",
		tid[:], sid[:], pid[:], sp.TraceState().AsRaw(), int32(sp.Kind()), sp.StartTimestamp(), sp.EndTimestamp(),
		sp.Attributes().Len(), sp.DroppedAttributesCount())
	for _, ev := range sp.Events().All() {
		fmt.Fprintf(&b, " event=%q@%d/%d/%d", ev.Name(), ev.Timestamp(), ev.Attributes().Len(), ev.DroppedAttributesCount())
	}
	fmt.Fprintf(&b, " droppedEvents=%d", sp.DroppedEventsCount())
	for _, l := range sp.Links().All() {
		lt, ls := l.TraceID(), l.SpanID()
		fmt.Fprintf(&b, " link=%x/%x/%q/%d/%d/%d", lt[:], ls[:], l.TraceState().AsRaw(), l.Attributes().Len(), l.DroppedAttributesCount(), l.Flags())
	}
	fmt.Fprintf(&b, " droppedLinks=%d status=%d:%q flags=%d", sp.DroppedLinksCount(), int32(sp.Status().Code()), sp.Status().Message(), sp.Flags())
	return b.String()
}

func logDetail(lr plog.LogRecord) string {
	tid, sid := lr.TraceID(), lr.SpanID()
	return fmt.Sprintf("time=%d observed=%d sev=%d text=%q body=%s:%q attrs=%d dropped=%d flags=%d trace=%x span=%x event=%q",
		lr.Timestamp(), lr.ObservedTimestamp(), int32(lr.SeverityNumber()), lr.SeverityText(), lr.Body().Type(), lr.Body().AsString(),
		lr.Attributes().Len(), lr.DroppedAttributesCount(), uint32(lr.Flags()), tid[:], sid[:], lr.EventName())
}

func metricHead(m pmetric.Metric) string {
	var temporality int32
	monotonic := false
	switch m.Type() {
	case pmetric.MetricTypeSum:
		temporality, monotonic = int32(m.Sum().AggregationTemporality()), m.Sum().IsMonotonic()
	case pmetric.MetricTypeHistogram:
		temporality = int32(m.Histogram().AggregationTemporality())
	case pmetric.MetricTypeExponentialHistogram:
		temporality = int32(m.ExponentialHistogram().AggregationTemporality())
	}
	return fmt.Sprintf("desc=%q unit=%q metadata=%d temporality=%d monotonic=%v", m.Description(), m.Unit(), m.Metadata().Len(), temporality, monotonic)
}

func exemplarsDetail(es pmetric.ExemplarSlice) string {
	var b strings.Builder
	for _, e := range es.All() {
		sid, tid := e.SpanID(), e.TraceID()
		fmt.Fprintf(&b, " exemplar=%d/%s/%d/%v/%x/%x/%d", e.Timestamp(), e.ValueType(), e.IntValue(), e.DoubleValue(), sid[:], tid[:], e.FilteredAttributes().Len())
	}
	return b.String()
}

func optional(has bool, v float64) string {
	if !has {
		return "-"
	}
	return fmt.Sprint(v)
}

// pointDetails returns the detail of each data point of m, in order.
func pointDetails(m pmetric.Metric) []string {
	head := metricHead(m)
	var out []string
	switch m.Type() {
	case pmetric.MetricTypeGauge, pmetric.MetricTypeSum:
		var dps pmetric.NumberDataPointSlice
		if m.Type() == pmetric.MetricTypeSum {
			dps = m.Sum().DataPoints()
		} else {
			dps = m.Gauge().DataPoints()
		}
		for _, p := range dps.All() {
			out = append(out, fmt.Sprintf("%s start=%d time=%d value=%s/%d/%v attrs=%d flags=%d%s", head,
				p.StartTimestamp(), p.Timestamp(), p.ValueType(), p.IntValue(), p.DoubleValue(), p.Attributes().Len(), uint32(p.Flags()),
				exemplarsDetail(p.Exemplars())))
		}
	case pmetric.MetricTypeHistogram:
		for _, p := range m.Histogram().DataPoints().All() {
			out = append(out, fmt.Sprintf("%s start=%d time=%d count=%d sum=%s min=%s max=%s buckets=%v bounds=%v attrs=%d flags=%d%s", head,
				p.StartTimestamp(), p.Timestamp(), p.Count(), optional(p.HasSum(), p.Sum()), optional(p.HasMin(), p.Min()), optional(p.HasMax(), p.Max()),
				p.BucketCounts().AsRaw(), p.ExplicitBounds().AsRaw(), p.Attributes().Len(), uint32(p.Flags()), exemplarsDetail(p.Exemplars())))
		}
	case pmetric.MetricTypeExponentialHistogram:
		for _, p := range m.ExponentialHistogram().DataPoints().All() {
			out = append(out, fmt.Sprintf("%s start=%d time=%d count=%d sum=%s min=%s max=%s scale=%d zero=%d threshold=%v pos=%d:%v neg=%d:%v attrs=%d flags=%d%s", head,
				p.StartTimestamp(), p.Timestamp(), p.Count(), optional(p.HasSum(), p.Sum()), optional(p.HasMin(), p.Min()), optional(p.HasMax(), p.Max()),
				p.Scale(), p.ZeroCount(), p.ZeroThreshold(), p.Positive().Offset(), p.Positive().BucketCounts().AsRaw(),
				p.Negative().Offset(), p.Negative().BucketCounts().AsRaw(), p.Attributes().Len(), uint32(p.Flags()), exemplarsDetail(p.Exemplars())))
		}
	case pmetric.MetricTypeSummary:
		for _, p := range m.Summary().DataPoints().All() {
			var q strings.Builder
			for _, v := range p.QuantileValues().All() {
				fmt.Fprintf(&q, " q=%v:%v", v.Quantile(), v.Value())
			}
			out = append(out, fmt.Sprintf("%s start=%d time=%d count=%d sum=%v attrs=%d flags=%d%s", head,
				p.StartTimestamp(), p.Timestamp(), p.Count(), p.Sum(), p.Attributes().Len(), uint32(p.Flags()), q.String()))
		}
	}
	return out
}
