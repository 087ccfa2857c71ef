// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"
)

// The details of an item, written from otlpwire's views in the format
// internal/wiregolden writes from pdata's (see its details.go): comparing
// the two lines compares every field of the item at once.

// detailError carries an accessor's error out of the detail functions.
type detailError struct{ err error }

// must returns v, or on err panics with a detailError, which
// TestGoldenItemDetails turns into a failure.
func must[T any](v T, err error) T {
	if err != nil {
		panic(detailError{err})
	}
	return v
}

// count returns how many values seq yields, failing on an error.
func count[T any](t *testing.T, seq iter.Seq2[T, error]) int {
	t.Helper()
	n := 0
	for _, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// collect returns the values seq yields, failing on an error.
func collect[T any](t *testing.T, seq iter.Seq2[T, error]) []T {
	t.Helper()
	out := []T{}
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func spanDetail(t *testing.T, sp Span) string {
	t.Helper()
	var b strings.Builder
	tid, sid, pid := must(sp.TraceID()), must(sp.SpanID()), must(sp.ParentSpanID())
	fmt.Fprintf(&b, "trace=%x span=%x parent=%x state=%q kind=%d start=%d end=%d attrs=%d dropped=%d",
		tid[:], sid[:], pid[:], must(sp.TraceState()), must(sp.Kind()), must(sp.StartTimeUnixNano()), must(sp.EndTimeUnixNano()),
		count(t, sp.Attributes()), must(sp.DroppedAttributesCount()))
	for ev, err := range sp.Events() {
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, " event=%q@%d/%d/%d", must(ev.Name()), must(ev.TimeUnixNano()), count(t, ev.Attributes()), must(ev.DroppedAttributesCount()))
	}
	fmt.Fprintf(&b, " droppedEvents=%d", must(sp.DroppedEventsCount()))
	for l, err := range sp.Links() {
		if err != nil {
			t.Fatal(err)
		}
		lt, ls := must(l.TraceID()), must(l.SpanID())
		fmt.Fprintf(&b, " link=%x/%x/%q/%d/%d/%d", lt[:], ls[:], must(l.TraceState()), count(t, l.Attributes()), must(l.DroppedAttributesCount()), must(l.Flags()))
	}
	st := must(sp.Status())
	fmt.Fprintf(&b, " droppedLinks=%d status=%d:%q flags=%d", must(sp.DroppedLinksCount()), st.Code, st.Message, must(sp.Flags()))
	return b.String()
}

func logDetail(t *testing.T, lr LogRecord) string {
	t.Helper()
	tid, sid := must(lr.TraceID()), must(lr.SpanID())
	body := must(lr.Body())
	return fmt.Sprintf("time=%d observed=%d sev=%d text=%q body=%s:%q attrs=%d dropped=%d flags=%d trace=%x span=%x event=%q",
		must(lr.TimeUnixNano()), must(lr.ObservedTimeUnixNano()), must(lr.SeverityNumber()), must(lr.SeverityText()),
		body.Kind(), body.AppendText(nil), count(t, lr.Attributes()), must(lr.DroppedAttributesCount()), must(lr.Flags()),
		tid[:], sid[:], must(lr.EventName()))
}

func metricHead(t *testing.T, m Metric) string {
	t.Helper()
	return fmt.Sprintf("desc=%q unit=%q metadata=%d temporality=%d monotonic=%v", must(m.Description()), must(m.Unit()),
		count(t, m.Metadata()), must(m.AggregationTemporality()), must(m.IsMonotonic()))
}

func exemplarsDetail(t *testing.T, es iter.Seq2[Exemplar, error]) string {
	t.Helper()
	var b strings.Builder
	for e, err := range es {
		if err != nil {
			t.Fatal(err)
		}
		sid, tid := must(e.SpanID()), must(e.TraceID())
		fmt.Fprintf(&b, " exemplar=%d/%s/%d/%v/%x/%x/%d", must(e.TimeUnixNano()), must(e.ValueType()), must(e.IntValue()),
			must(e.DoubleValue()), sid[:], tid[:], count(t, e.FilteredAttributes()))
	}
	return b.String()
}

func optional(v float64, has bool, err error) string {
	if err != nil {
		panic(detailError{err})
	}
	if !has {
		return "-"
	}
	return fmt.Sprint(v)
}

// pointDetails returns the detail of each data point of m.
func pointDetails(t *testing.T, m Metric) []string {
	t.Helper()
	head := metricHead(t, m)
	var out []string
	for p, err := range m.NumberDataPoints() {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s start=%d time=%d value=%s/%d/%v attrs=%d flags=%d%s", head,
			must(p.StartTimeUnixNano()), must(p.TimeUnixNano()), must(p.ValueType()), must(p.IntValue()), must(p.DoubleValue()),
			count(t, p.Attributes()), must(p.Flags()), exemplarsDetail(t, p.Exemplars())))
	}
	for p, err := range m.HistogramDataPoints() {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s start=%d time=%d count=%d sum=%s min=%s max=%s buckets=%v bounds=%v attrs=%d flags=%d%s", head,
			must(p.StartTimeUnixNano()), must(p.TimeUnixNano()), must(p.Count()), optional(p.Sum()), optional(p.Min()), optional(p.Max()),
			collect(t, p.BucketCounts()), collect(t, p.ExplicitBounds()), count(t, p.Attributes()), must(p.Flags()), exemplarsDetail(t, p.Exemplars())))
	}
	for p, err := range m.ExponentialHistogramDataPoints() {
		if err != nil {
			t.Fatal(err)
		}
		pos, neg := p.Positive(), p.Negative()
		out = append(out, fmt.Sprintf("%s start=%d time=%d count=%d sum=%s min=%s max=%s scale=%d zero=%d threshold=%v pos=%d:%v neg=%d:%v attrs=%d flags=%d%s", head,
			must(p.StartTimeUnixNano()), must(p.TimeUnixNano()), must(p.Count()), optional(p.Sum()), optional(p.Min()), optional(p.Max()),
			must(p.Scale()), must(p.ZeroCount()), must(p.ZeroThreshold()), must(pos.Offset()), collect(t, pos.BucketCounts()),
			must(neg.Offset()), collect(t, neg.BucketCounts()), count(t, p.Attributes()), must(p.Flags()), exemplarsDetail(t, p.Exemplars())))
	}
	for p, err := range m.SummaryDataPoints() {
		if err != nil {
			t.Fatal(err)
		}
		var q strings.Builder
		for v, err := range p.QuantileValues() {
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&q, " q=%v:%v", v.Quantile, v.Value)
		}
		out = append(out, fmt.Sprintf("%s start=%d time=%d count=%d sum=%v attrs=%d flags=%d%s", head,
			must(p.StartTimeUnixNano()), must(p.TimeUnixNano()), must(p.Count()), must(p.Sum()), count(t, p.Attributes()),
			must(p.Flags()), q.String()))
	}
	return out
}

// itemDetails returns the details of every item of each resource of req.
func itemDetails(t *testing.T, sig Signal, req []byte) [][]string {
	t.Helper()
	var out [][]string
	for rd, err := range NewRequest(sig, req).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		details := []string{}
		for sd, err := range rd.Scopes() {
			if err != nil {
				t.Fatal(err)
			}
			if sig != SignalTraces {
				wrongSignal(t, sd.Spans())
			}
			if sig != SignalLogs {
				wrongSignal(t, sd.LogRecords())
			}
			if sig != SignalMetrics {
				wrongSignal(t, sd.Metrics())
			}
			switch sig {
			case SignalTraces:
				for sp, err := range sd.Spans() {
					if err != nil {
						t.Fatal(err)
					}
					details = append(details, spanDetail(t, sp))
				}
			case SignalLogs:
				for lr, err := range sd.LogRecords() {
					if err != nil {
						t.Fatal(err)
					}
					details = append(details, logDetail(t, lr))
				}
			case SignalMetrics:
				for m, err := range sd.Metrics() {
					if err != nil {
						t.Fatal(err)
					}
					details = append(details, pointDetails(t, m)...)
				}
			}
		}
		out = append(out, details)
	}
	return out
}

// wrongSignal fails unless seq, an item iterator of another signal than
// its scope's, yields one ErrWrongSignal and nothing else.
func wrongSignal[T any](t *testing.T, seq iter.Seq2[T, error]) {
	t.Helper()
	n := 0
	for _, err := range seq {
		n++
		if !errors.Is(err, ErrWrongSignal) || errors.Is(err, ErrMalformed) {
			t.Fatalf("an item iterator of another signal yields %v, want ErrWrongSignal", err)
		}
	}
	if n != 1 {
		t.Fatalf("an item iterator of another signal yields %d times, want one ErrWrongSignal", n)
	}
}

// TestGoldenItemDetails: every field of every item reads as pdata reads it.
func TestGoldenItemDetails(t *testing.T) {
	for _, v := range goldenVectors(t) {
		if v.Error != "" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					de, ok := r.(detailError)
					if !ok {
						panic(r)
					}
					t.Fatalf("reading an item: %v", de.err)
				}
			}()
			got := itemDetails(t, v.signal(t), v.Request)
			for i, r := range v.Resources {
				if len(got[i]) != len(r.ItemDetails) {
					t.Fatalf("resource %d: %d items, pdata %d", i, len(got[i]), len(r.ItemDetails))
				}
				for j := range got[i] {
					if got[i][j] != r.ItemDetails[j] {
						t.Fatalf("resource %d item %d:\n%s\npdata:\n%s", i, j, got[i][j], r.ItemDetails[j])
					}
				}
			}
		})
	}
}
