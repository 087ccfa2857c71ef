// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"errors"
	"math"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// wrapItem builds a request holding one resource, one scope and the item
// encoded in item (without tag).
func wrapItem(item []byte) []byte {
	var scope, res, req pb
	scope.bytesAlways(2, item)
	res.bytesAlways(2, scope.b)
	req.bytesAlways(1, res.b)
	return req.b
}

// wrapMetric builds a metric request whose metric has the given data field.
func wrapMetric(dataField int, data []byte) []byte {
	var m pb
	m.str(1, "m")
	m.bytesAlways(dataField, data)
	return wrapItem(m.b)
}

// wrapPoint builds a metric request with one data point in the data field.
func wrapPoint(dataField int, point []byte) []byte {
	var d pb
	d.bytesAlways(1, point)
	return wrapMetric(dataField, d.b)
}

func firstScope(t *testing.T, sig Signal, b []byte) ScopeData {
	t.Helper()
	for rd, err := range NewRequest(sig, b).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		for sd, err := range rd.Scopes() {
			if err != nil {
				t.Fatal(err)
			}
			return sd
		}
	}
	t.Fatal("no scope")
	return ScopeData{}
}

// firstErr returns the first error of seq, or nil.
func firstErr[T any](seq func(func(T, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

func TestItemViewsMalformed(t *testing.T) {
	bytesField := func(num int, n int) []byte {
		var p pb
		p.bytesAlways(num, make([]byte, n))
		return p.b
	}
	varintField := func(num int, v uint64) []byte {
		var p pb
		p.varintAlways(num, v)
		return p.b
	}
	traceCases := []struct {
		name   string
		span   []byte
		read   func(Span) error
		reason reason
	}{
		{"name as varint", varintField(5, 1), nil, errWireType},
		{"flags as varint", varintField(16, 1), nil, errWireType},
		{"start time as varint", varintField(7, 1), nil, errWireType},
		{"truncated fixed64", []byte{0x39, 1, 2}, nil, errTruncated},
		{"trace id of 15 bytes", bytesField(1, 15), func(s Span) error { _, err := s.TraceID(); return err }, errIDLength},
		{"span id of 9 bytes", bytesField(2, 9), func(s Span) error { _, err := s.SpanID(); return err }, errIDLength},
		{"parent id of 7 bytes", bytesField(4, 7), func(s Span) error { _, err := s.ParentSpanID(); return err }, errIDLength},
		{"event time as LEN", func() []byte {
			var p pb
			p.msg(11, func(q *pb) { q.bytesAlways(1, []byte{1}) })
			return p.b
		}(), nil, errWireType},
		{"link flags as varint", func() []byte {
			var p pb
			p.msg(13, func(q *pb) { q.varintAlways(6, 1) })
			return p.b
		}(), func(s Span) error { return firstErr(s.Links()) }, errWireType},
		{"status code as fixed64", func() []byte {
			var p pb
			p.msg(15, func(q *pb) { q.fixed64Always(3, 1) })
			return p.b
		}(), func(s Span) error { _, err := s.Status(); return err }, errWireType},
		{"link trace id of 3 bytes", func() []byte {
			var p pb
			p.msg(13, func(q *pb) { q.bytesAlways(1, []byte{1, 2, 3}) })
			return p.b
		}(), func(s Span) error {
			for l, err := range s.Links() {
				if err != nil {
					return err
				}
				_, err = l.TraceID()
				return err
			}
			return nil
		}, errIDLength},
	}
	for _, c := range traceCases {
		t.Run("traces/"+c.name, func(t *testing.T) {
			b := wrapItem(c.span)
			if err := ptraceotlp.NewExportRequest().UnmarshalProto(b); err == nil {
				t.Fatal("pdata accepts the input; the case tests nothing")
			}
			var err error
			for sp, e := range firstScope(t, SignalTraces, b).Spans() {
				if err = e; err == nil && c.read != nil {
					err = c.read(sp)
				}
				if err == nil {
					// Walking the events is how a bad event is found.
					err = firstErr(sp.Events())
				}
				break
			}
			checkParseError(t, err, c.reason)
		})
	}

	metricCases := []struct {
		name   string
		b      []byte
		read   func(Metric) error
		reason reason
	}{
		{"gauge as varint", wrapItem(varintField(5, 1)), func(m Metric) error { _, err := m.Type(); return err }, errWireType},
		{"sum temporality as LEN", wrapMetric(7, bytesField(2, 1)),
			func(m Metric) error { _, err := m.AggregationTemporality(); return err }, errWireType},
		{"as_int as varint", wrapPoint(5, varintField(6, 1)),
			func(m Metric) error { return firstErr(m.NumberDataPoints()) }, errWireType},
		{"point flags as fixed32", wrapPoint(7, []byte{0x45, 1, 0, 0, 0}),
			func(m Metric) error { return firstErr(m.NumberDataPoints()) }, errWireType},
		{"packed bucket counts of 7 bytes", wrapPoint(9, bytesField(6, 7)), func(m Metric) error {
			for p, err := range m.HistogramDataPoints() {
				if err != nil {
					return err
				}
				return firstErr(p.BucketCounts())
			}
			return nil
		}, errPackedLength},
		{"packed bounds of 9 bytes", wrapPoint(9, bytesField(7, 9)), func(m Metric) error {
			for p, err := range m.HistogramDataPoints() {
				if err != nil {
					return err
				}
				return firstErr(p.ExplicitBounds())
			}
			return nil
		}, errPackedLength},
		{"exponential bucket counts truncated varint", wrapPoint(10, func() []byte {
			var p pb
			p.msg(8, func(q *pb) { q.bytesAlways(2, []byte{0x05, 0x80}) })
			return p.b
		}()), func(m Metric) error {
			for p, err := range m.ExponentialHistogramDataPoints() {
				if err != nil {
					return err
				}
				return firstErr(p.Positive().BucketCounts())
			}
			return nil
		}, errTruncated},
		{"exponential scale as fixed64", wrapPoint(10, []byte{0x31, 0, 0, 0, 0, 0, 0, 0, 0}),
			func(m Metric) error { return firstErr(m.ExponentialHistogramDataPoints()) }, errWireType},
		{"quantile as varint", wrapPoint(11, func() []byte {
			var p pb
			p.msg(6, func(q *pb) { q.varintAlways(1, 1) })
			return p.b
		}()), func(m Metric) error {
			for p, err := range m.SummaryDataPoints() {
				if err != nil {
					return err
				}
				return firstErr(p.QuantileValues())
			}
			return nil
		}, errWireType},
		{"exemplar span id of 4 bytes", wrapPoint(5, func() []byte {
			var p pb
			p.msg(5, func(q *pb) { q.bytesAlways(4, []byte{1, 2, 3, 4}) })
			return p.b
		}()), func(m Metric) error {
			for p, err := range m.NumberDataPoints() {
				if err != nil {
					return err
				}
				for e, err := range p.Exemplars() {
					if err != nil {
						return err
					}
					_, err = e.SpanID()
					return err
				}
			}
			return nil
		}, errIDLength},
	}
	for _, c := range metricCases {
		t.Run("metrics/"+c.name, func(t *testing.T) {
			if err := pmetricotlp.NewExportRequest().UnmarshalProto(c.b); err == nil {
				t.Fatal("pdata accepts the input; the case tests nothing")
			}
			var err error
			for m, e := range firstScope(t, SignalMetrics, c.b).Metrics() {
				if err = e; err == nil {
					err = c.read(m)
				}
				break
			}
			checkParseError(t, err, c.reason)
		})
	}

	t.Run("logs/body as varint", func(t *testing.T) {
		var body pb
		body.msg(5, func(q *pb) { q.bytesAlways(2, []byte{1}) }) // bool_value as LEN
		lr := NewLogRecord(body.b)
		_, err := lr.Body()
		checkParseError(t, err, errWireType)
		var flags pb
		flags.varintAlways(8, 1)
		_, err = NewLogRecord(flags.b).Flags()
		checkParseError(t, err, errWireType)
	})
}

func checkParseError(t *testing.T, err error, reason reason) {
	t.Helper()
	if !errors.Is(err, ErrMalformed) || !hasReason(err, reason) {
		t.Fatalf("err = %v, want ErrMalformed and %v", err, reason)
	}
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Message == "" || pe.Field == 0 {
		t.Fatalf("err %v does not say where it failed", err)
	}
}

func TestItemIteratorsWrongSignal(t *testing.T) {
	sd := NewScopeData(SignalLogs, nil)
	if err := firstErr(sd.Spans()); !errors.Is(err, ErrWrongSignal) || errors.Is(err, ErrMalformed) {
		t.Fatalf("Spans on logs: %v", err)
	}
	if err := firstErr(sd.Metrics()); !errors.Is(err, ErrWrongSignal) {
		t.Fatalf("Metrics on logs: %v", err)
	}
	if err := firstErr(NewScopeData(SignalMetrics, nil).LogRecords()); !errors.Is(err, ErrWrongSignal) {
		t.Fatalf("LogRecords on metrics: %v", err)
	}
	if err := firstErr(NewScopeData(0, nil).LogRecords()); !errors.Is(err, ErrUnknownSignal) {
		t.Fatalf("LogRecords on signal 0: %v", err)
	}
	// A metric of another type has no points of the asked kind.
	var dp pb
	dp.fixed64Always(4, math.Float64bits(1.5))
	m := firstMetric(t, wrapPoint(5, dp.b))
	if n := len(collect(t, m.HistogramDataPoints())); n != 0 {
		t.Fatalf("gauge has %d histogram points", n)
	}
	if n := len(collect(t, m.NumberDataPoints())); n != 1 {
		t.Fatalf("gauge has %d number points", n)
	}
}

func firstMetric(t *testing.T, b []byte) Metric {
	t.Helper()
	for m, err := range firstScope(t, SignalMetrics, b).Metrics() {
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	t.Fatal("no metric")
	return Metric{}
}

// TestRepeatedScalarsMixed checks unusual but legal encodings against pdata:
// packed and unpacked occurrences of one repeated field, several
// occurrences of singular messages (merged) and of scalars (last wins), and
// several data fields in one metric (the last replaces the others).
func TestRepeatedScalarsMixed(t *testing.T) {
	var hist pb
	hist.fixed64Always(6, 1)              // unpacked, replaced by the packed field below
	hist.bytesAlways(6, make([]byte, 16)) // packed [0, 0]
	hist.fixed64Always(6, 4)              // unpacked, appended
	hist.fixed64Always(7, math.Float64bits(2.5))
	hist.fixed64Always(4, 9)
	hist.fixed64Always(4, 10) // count: last wins
	var exp pb
	exp.msg(8, func(q *pb) {
		q.varintAlways(1, zigzag32(-3))
		q.varintAlways(2, 7)
		q.bytesAlways(2, []byte{1, 0x80, 0x01})
	})
	exp.msg(8, func(q *pb) {
		q.varintAlways(1, zigzag32(5)) // offset: last wins across merged occurrences
		q.bytesAlways(2, []byte{3})    // counts append across occurrences
	})
	var m pb
	m.str(1, "mixed")
	m.msg(9, func(q *pb) { q.bytesAlways(1, hist.b) })
	m.msg(10, func(q *pb) {
		q.bytesAlways(1, exp.b)
		q.varintAlways(2, 1)
	})
	b := wrapItem(m.b)
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	want := req.Metrics().ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0)
	got := firstMetric(t, b)
	if typ := must(got.Type())(t); typ != MetricTypeExponentialHistogram || uint8(typ) != uint8(want.Type()) {
		t.Fatalf("Type = %v, pdata %v", typ, want.Type())
	}
	if n := len(collect(t, got.HistogramDataPoints())); n != 0 {
		t.Fatalf("replaced histogram still yields %d points", n)
	}
	checkMetric(t, got, want)
	pts := collect(t, got.ExponentialHistogramDataPoints())
	if counts := collect(t, pts[0].Positive().BucketCounts()); !slices.Equal(counts, []uint64{7, 1, 128, 3}) {
		t.Fatalf("positive counts %v", counts)
	}

	// The histogram alone, to compare the packed/unpacked mix with pdata.
	var hm pb
	hm.str(1, "h")
	hm.msg(9, func(q *pb) { q.bytesAlways(1, hist.b) })
	b = wrapItem(hm.b)
	req = pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	want = req.Metrics().ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0)
	got = firstMetric(t, b)
	checkMetric(t, got, want)
	hp := collect(t, got.HistogramDataPoints())
	if counts := collect(t, hp[0].BucketCounts()); !slices.Equal(counts, []uint64{0, 0, 4}) {
		t.Fatalf("bucket counts %v, want pdata's [0 0 4]", counts)
	}

	// A span whose status occurs twice (merged) and whose name occurs twice
	// (last wins).
	var sp pb
	sp.str(5, "first")
	sp.msg(15, func(q *pb) { q.str(2, "msg") })
	sp.str(5, "second")
	sp.msg(15, func(q *pb) { q.varintAlways(3, 2) })
	sp.fixed32(16, 0x301)
	b = wrapItem(sp.b)
	treq := ptraceotlp.NewExportRequest()
	if err := treq.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	for span, err := range firstScope(t, SignalTraces, b).Spans() {
		if err != nil {
			t.Fatal(err)
		}
		checkSpan(t, span, treq.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0))
		if st := must(span.Status())(t); st.Code != 2 || string(st.Message) != "msg" {
			t.Fatalf("merged status %+v", st)
		}
	}
}

// Scale and bucket offsets are sint32. A varint longer than 32 bits is
// decoded as pdata decodes it: shifted as a whole, then cut to 32 bits, so
// its bit 32 becomes the result's bit 31 (FuzzMetrics found the difference).
func TestSint32FromOversizedVarints(t *testing.T) {
	for _, v := range []uint64{
		0, 1, 2, 0xfffffffe, 0xffffffff,
		1 << 32, 1<<32 | 1, 1<<33 | 6, 0x1_2345_6789, 0xffff_ffff_ffff_ffff, 0x8000_0000_0000_0001,
	} {
		var dp pb
		dp.varintAlways(6, v)
		dp.msg(8, func(q *pb) { q.varintAlways(1, v) })
		b := wrapMetric(10, func() []byte { var e pb; e.bytesAlways(1, dp.b); return e.b }())
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		want := req.Metrics().ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).
			ExponentialHistogram().DataPoints().At(0)
		pts := collect(t, firstMetric(t, b).ExponentialHistogramDataPoints())
		if got := must(pts[0].Scale())(t); got != want.Scale() {
			t.Errorf("varint %#x: Scale = %d, pdata %d", v, got, want.Scale())
		}
		if got := must(pts[0].Positive().Offset())(t); got != want.Positive().Offset() {
			t.Errorf("varint %#x: Offset = %d, pdata %d", v, got, want.Positive().Offset())
		}
	}
}
