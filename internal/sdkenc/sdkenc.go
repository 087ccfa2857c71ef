// SPDX-License-Identifier: Apache-2.0

// Package sdkenc writes pdata's telemetry as OTLP protobuf the way SDKs
// do: fields in ascending order, where pdata writes them in descending
// order, with options for the shapes old or unusual producers send. The
// differential tests and the golden vectors use it to check that nothing
// in the wire views depends on field order or on one producer's habits.
package sdkenc

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// pb is a minimal protobuf writer that emits fields in ascending field
// order, the way SDKs do (pdata writes them in descending order). It lets the
// differential tests check that nothing depends on field order.
type pb struct {
	b        []byte
	reverse  bool // write attributes in reverse order
	unpacked bool // write repeated scalars one element per field
}

func (p *pb) tag(num int, typ uint8) { p.b = protowire.AppendVarint(p.b, uint64(num)<<3|uint64(typ)) }

func (p *pb) varint(num int, v uint64) {
	if v != 0 {
		p.varintAlways(num, v)
	}
}

func (p *pb) varintAlways(num int, v uint64) {
	p.tag(num, wireVarint)
	p.b = protowire.AppendVarint(p.b, v)
}

func (p *pb) fixed64(num int, v uint64) {
	if v != 0 {
		p.fixed64Always(num, v)
	}
}

func (p *pb) fixed64Always(num int, v uint64) {
	p.tag(num, wireI64)
	for i := range 8 {
		p.b = append(p.b, byte(v>>(8*i)))
	}
}

func (p *pb) fixed32(num int, v uint32) {
	if v != 0 {
		p.tag(num, wireI32)
		p.b = append(p.b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
}

func (p *pb) bytes(num int, b []byte) {
	if len(b) > 0 {
		p.bytesAlways(num, b)
	}
}

func (p *pb) bytesAlways(num int, b []byte) {
	p.tag(num, wireLen)
	p.b = protowire.AppendVarint(p.b, uint64(len(b)))
	p.b = append(p.b, b...)
}

func (p *pb) str(num int, s string) { p.bytes(num, []byte(s)) }

func (p *pb) msg(num int, fn func(*pb)) {
	q := pb{reverse: p.reverse, unpacked: p.unpacked}
	fn(&q)
	p.bytesAlways(num, q.b)
}

func zigzag32(v int32) uint64 { return uint64(uint32((v << 1) ^ (v >> 31))) }

func encAnyValue(p *pb, v pcommon.Value) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		p.bytesAlways(1, []byte(v.Str()))
	case pcommon.ValueTypeBool:
		b := uint64(0)
		if v.Bool() {
			b = 1
		}
		p.varintAlways(2, b)
	case pcommon.ValueTypeInt:
		p.varintAlways(3, uint64(v.Int()))
	case pcommon.ValueTypeDouble:
		p.fixed64Always(4, math.Float64bits(v.Double()))
	case pcommon.ValueTypeSlice:
		p.msg(5, func(q *pb) {
			for _, e := range v.Slice().All() {
				q.msg(1, func(r *pb) { encAnyValue(r, e) })
			}
		})
	case pcommon.ValueTypeMap:
		p.msg(6, func(q *pb) { encAttrs(q, 1, v.Map()) })
	case pcommon.ValueTypeBytes:
		p.bytesAlways(7, v.Bytes().AsRaw())
	}
}

func encAttrs(p *pb, num int, m pcommon.Map) {
	for i := range m.Len() {
		if p.reverse {
			i = m.Len() - 1 - i
		}
		k, v := mapAt(m, i)
		p.msg(num, func(q *pb) {
			q.str(1, k)
			q.msg(2, func(r *pb) { encAnyValue(r, v) })
		})
	}
}

func mapAt(m pcommon.Map, i int) (string, pcommon.Value) {
	j := 0
	for k, v := range m.All() {
		if j == i {
			return k, v
		}
		j++
	}
	panic("index out of range")
}

func encResource(p *pb, r pcommon.Resource) {
	p.msg(1, func(q *pb) {
		encAttrs(q, 1, r.Attributes())
		q.varint(2, uint64(r.DroppedAttributesCount()))
	})
}

func encScope(p *pb, s pcommon.InstrumentationScope) {
	p.msg(1, func(q *pb) {
		q.str(1, s.Name())
		q.str(2, s.Version())
		encAttrs(q, 3, s.Attributes())
		q.varint(4, uint64(s.DroppedAttributesCount()))
	})
}

// Wire types of the fields the encoder writes.
const (
	wireVarint = uint8(protowire.VarintType)
	wireI64    = uint8(protowire.Fixed64Type)
	wireLen    = uint8(protowire.BytesType)
	wireI32    = uint8(protowire.Fixed32Type)
)

// Options choose the shape of the encoding. By default scopes go in
// field 2, attributes in their order and repeated scalars packed.
type Options struct {
	// Deprecated puts scopes in field 1000 only, as old producers did.
	Deprecated bool
	// Decoy adds, beside field 2, a copy of the first scope in field
	// 1000, which pdata's receivers drop.
	Decoy bool
	// Reverse writes attributes in reverse order.
	Reverse bool
	// Unpacked writes repeated scalars one element per field.
	Unpacked bool
}

func encScopes(p *pb, o Options, n int, fn func(q *pb, i int)) {
	num := 2
	if o.Deprecated {
		num = 1000
	}
	for i := range n {
		p.msg(num, func(q *pb) { fn(q, i) })
	}
	if o.Decoy && !o.Deprecated && n > 0 {
		p.msg(1000, func(q *pb) { fn(q, 0) })
	}
}

// Traces encodes td.
func Traces(td ptrace.Traces, o Options) []byte {
	p := pb{reverse: o.Reverse, unpacked: o.Unpacked}
	for _, rs := range td.ResourceSpans().All() {
		p.msg(1, func(q *pb) {
			encResource(q, rs.Resource())
			encScopes(q, o, rs.ScopeSpans().Len(), func(r *pb, i int) {
				ss := rs.ScopeSpans().At(i)
				encScope(r, ss.Scope())
				for _, sp := range ss.Spans().All() {
					r.msg(2, func(s *pb) { encSpan(s, sp) })
				}
				r.str(3, ss.SchemaUrl())
			})
			q.str(3, rs.SchemaUrl())
		})
	}
	return p.b
}

func encSpan(p *pb, sp ptrace.Span) {
	if tid := sp.TraceID(); !tid.IsEmpty() {
		p.bytes(1, tid[:])
	}
	if sid := sp.SpanID(); !sid.IsEmpty() {
		p.bytes(2, sid[:])
	}
	p.str(3, sp.TraceState().AsRaw())
	if pid := sp.ParentSpanID(); !pid.IsEmpty() {
		p.bytes(4, pid[:])
	}
	p.str(5, sp.Name())
	p.varint(6, uint64(sp.Kind()))
	p.fixed64(7, uint64(sp.StartTimestamp()))
	p.fixed64(8, uint64(sp.EndTimestamp()))
	encAttrs(p, 9, sp.Attributes())
	p.varint(10, uint64(sp.DroppedAttributesCount()))
	for _, ev := range sp.Events().All() {
		p.msg(11, func(q *pb) {
			q.fixed64(1, uint64(ev.Timestamp()))
			q.str(2, ev.Name())
			encAttrs(q, 3, ev.Attributes())
			q.varint(4, uint64(ev.DroppedAttributesCount()))
		})
	}
	p.varint(12, uint64(sp.DroppedEventsCount()))
	for _, l := range sp.Links().All() {
		p.msg(13, func(q *pb) {
			if tid := l.TraceID(); !tid.IsEmpty() {
				q.bytes(1, tid[:])
			}
			if sid := l.SpanID(); !sid.IsEmpty() {
				q.bytes(2, sid[:])
			}
			q.str(3, l.TraceState().AsRaw())
			encAttrs(q, 4, l.Attributes())
			q.varint(5, uint64(l.DroppedAttributesCount()))
			q.fixed32(6, l.Flags())
		})
	}
	p.varint(14, uint64(sp.DroppedLinksCount()))
	p.msg(15, func(q *pb) {
		q.str(2, sp.Status().Message())
		q.varint(3, uint64(sp.Status().Code()))
	})
	p.fixed32(16, sp.Flags())
}

// Logs encodes ld.
func Logs(ld plog.Logs, o Options) []byte {
	p := pb{reverse: o.Reverse, unpacked: o.Unpacked}
	for _, rl := range ld.ResourceLogs().All() {
		p.msg(1, func(q *pb) {
			encResource(q, rl.Resource())
			encScopes(q, o, rl.ScopeLogs().Len(), func(r *pb, i int) {
				sl := rl.ScopeLogs().At(i)
				encScope(r, sl.Scope())
				for _, lr := range sl.LogRecords().All() {
					r.msg(2, func(s *pb) { encLogRecord(s, lr) })
				}
				r.str(3, sl.SchemaUrl())
			})
			q.str(3, rl.SchemaUrl())
		})
	}
	return p.b
}

func encLogRecord(p *pb, lr plog.LogRecord) {
	p.fixed64(1, uint64(lr.Timestamp()))
	p.varint(2, uint64(lr.SeverityNumber()))
	p.str(3, lr.SeverityText())
	if lr.Body().Type() != pcommon.ValueTypeEmpty {
		p.msg(5, func(q *pb) { encAnyValue(q, lr.Body()) })
	}
	encAttrs(p, 6, lr.Attributes())
	p.varint(7, uint64(lr.DroppedAttributesCount()))
	p.fixed32(8, uint32(lr.Flags()))
	if tid := lr.TraceID(); !tid.IsEmpty() {
		p.bytes(9, tid[:])
	}
	if sid := lr.SpanID(); !sid.IsEmpty() {
		p.bytes(10, sid[:])
	}
	p.fixed64(11, uint64(lr.ObservedTimestamp()))
	p.str(12, lr.EventName())
}

// Metrics encodes md.
func Metrics(md pmetric.Metrics, o Options) []byte {
	p := pb{reverse: o.Reverse, unpacked: o.Unpacked}
	for _, rm := range md.ResourceMetrics().All() {
		p.msg(1, func(q *pb) {
			encResource(q, rm.Resource())
			encScopes(q, o, rm.ScopeMetrics().Len(), func(r *pb, i int) {
				sm := rm.ScopeMetrics().At(i)
				encScope(r, sm.Scope())
				for _, m := range sm.Metrics().All() {
					r.msg(2, func(s *pb) { encMetric(s, m) })
				}
				r.str(3, sm.SchemaUrl())
			})
			q.str(3, rm.SchemaUrl())
		})
	}
	return p.b
}

func encMetric(p *pb, m pmetric.Metric) {
	p.str(1, m.Name())
	p.str(2, m.Description())
	p.str(3, m.Unit())
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		p.msg(5, func(q *pb) {
			for _, dp := range m.Gauge().DataPoints().All() {
				q.msg(1, func(r *pb) { encNumberPoint(r, dp) })
			}
		})
	case pmetric.MetricTypeSum:
		p.msg(7, func(q *pb) {
			for _, dp := range m.Sum().DataPoints().All() {
				q.msg(1, func(r *pb) { encNumberPoint(r, dp) })
			}
			q.varint(2, uint64(m.Sum().AggregationTemporality()))
			if m.Sum().IsMonotonic() {
				q.varint(3, 1)
			}
		})
	case pmetric.MetricTypeHistogram:
		p.msg(9, func(q *pb) {
			for _, dp := range m.Histogram().DataPoints().All() {
				q.msg(1, func(r *pb) { encHistogramPoint(r, dp) })
			}
			q.varint(2, uint64(m.Histogram().AggregationTemporality()))
		})
	case pmetric.MetricTypeExponentialHistogram:
		p.msg(10, func(q *pb) {
			for _, dp := range m.ExponentialHistogram().DataPoints().All() {
				q.msg(1, func(r *pb) { encExpPoint(r, dp) })
			}
			q.varint(2, uint64(m.ExponentialHistogram().AggregationTemporality()))
		})
	case pmetric.MetricTypeSummary:
		p.msg(11, func(q *pb) {
			for _, dp := range m.Summary().DataPoints().All() {
				q.msg(1, func(r *pb) { encSummaryPoint(r, dp) })
			}
		})
	}
	encAttrs(p, 12, m.Metadata())
}

func encNumberPoint(p *pb, dp pmetric.NumberDataPoint) {
	p.fixed64(2, uint64(dp.StartTimestamp()))
	p.fixed64(3, uint64(dp.Timestamp()))
	switch dp.ValueType() {
	case pmetric.NumberDataPointValueTypeDouble:
		p.fixed64Always(4, math.Float64bits(dp.DoubleValue()))
	case pmetric.NumberDataPointValueTypeInt:
		p.fixed64Always(6, uint64(dp.IntValue()))
	}
	encExemplars(p, 5, dp.Exemplars())
	encAttrs(p, 7, dp.Attributes())
	p.varint(8, uint64(dp.Flags()))
}

func encExemplars(p *pb, num int, es pmetric.ExemplarSlice) {
	for _, e := range es.All() {
		p.msg(num, func(q *pb) {
			q.fixed64(2, uint64(e.Timestamp()))
			if e.ValueType() == pmetric.ExemplarValueTypeDouble {
				q.fixed64Always(3, math.Float64bits(e.DoubleValue()))
			}
			if sid := e.SpanID(); !sid.IsEmpty() {
				q.bytes(4, sid[:])
			}
			if tid := e.TraceID(); !tid.IsEmpty() {
				q.bytes(5, tid[:])
			}
			if e.ValueType() == pmetric.ExemplarValueTypeInt {
				q.fixed64Always(6, uint64(e.IntValue()))
			}
			encAttrs(q, 7, e.FilteredAttributes())
		})
	}
}

func encHistogramPoint(p *pb, dp pmetric.HistogramDataPoint) {
	p.fixed64(2, uint64(dp.StartTimestamp()))
	p.fixed64(3, uint64(dp.Timestamp()))
	p.fixed64(4, dp.Count())
	if dp.HasSum() {
		p.fixed64Always(5, math.Float64bits(dp.Sum()))
	}
	packed := func(num int, vals []uint64) {
		if p.unpacked {
			for _, v := range vals {
				p.fixed64Always(num, v)
			}
			return
		}
		if len(vals) == 0 {
			return
		}
		var q pb
		for _, v := range vals {
			for i := range 8 {
				q.b = append(q.b, byte(v>>(8*i)))
			}
		}
		p.bytesAlways(num, q.b)
	}
	packed(6, dp.BucketCounts().AsRaw())
	bounds := make([]uint64, dp.ExplicitBounds().Len())
	for i, b := range dp.ExplicitBounds().All() {
		bounds[i] = math.Float64bits(b)
	}
	packed(7, bounds)
	encExemplars(p, 8, dp.Exemplars())
	encAttrs(p, 9, dp.Attributes())
	p.varint(10, uint64(dp.Flags()))
	if dp.HasMin() {
		p.fixed64Always(11, math.Float64bits(dp.Min()))
	}
	if dp.HasMax() {
		p.fixed64Always(12, math.Float64bits(dp.Max()))
	}
}

func encExpPoint(p *pb, dp pmetric.ExponentialHistogramDataPoint) {
	encAttrs(p, 1, dp.Attributes())
	p.fixed64(2, uint64(dp.StartTimestamp()))
	p.fixed64(3, uint64(dp.Timestamp()))
	p.fixed64(4, dp.Count())
	if dp.HasSum() {
		p.fixed64Always(5, math.Float64bits(dp.Sum()))
	}
	p.varint(6, zigzag32(dp.Scale()))
	p.fixed64(7, dp.ZeroCount())
	buckets := func(num int, b pmetric.ExponentialHistogramDataPointBuckets) {
		p.msg(num, func(q *pb) {
			q.varint(1, zigzag32(b.Offset()))
			if q.unpacked {
				for _, c := range b.BucketCounts().All() {
					q.varintAlways(2, c)
				}
			} else if b.BucketCounts().Len() > 0 {
				var r pb
				for _, c := range b.BucketCounts().All() {
					r.b = protowire.AppendVarint(r.b, c)
				}
				q.bytesAlways(2, r.b)
			}
		})
	}
	buckets(8, dp.Positive())
	buckets(9, dp.Negative())
	p.varint(10, uint64(dp.Flags()))
	encExemplars(p, 11, dp.Exemplars())
	if dp.HasMin() {
		p.fixed64Always(12, math.Float64bits(dp.Min()))
	}
	if dp.HasMax() {
		p.fixed64Always(13, math.Float64bits(dp.Max()))
	}
	p.fixed64(14, math.Float64bits(dp.ZeroThreshold()))
}

func encSummaryPoint(p *pb, dp pmetric.SummaryDataPoint) {
	p.fixed64(2, uint64(dp.StartTimestamp()))
	p.fixed64(3, uint64(dp.Timestamp()))
	p.fixed64(4, dp.Count())
	p.fixed64(5, math.Float64bits(dp.Sum()))
	for _, q := range dp.QuantileValues().All() {
		p.msg(6, func(r *pb) {
			r.fixed64(1, math.Float64bits(q.Quantile()))
			r.fixed64(2, math.Float64bits(q.Value()))
		})
	}
	encAttrs(p, 7, dp.Attributes())
	p.varint(8, uint64(dp.Flags()))
}
