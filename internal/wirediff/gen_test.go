// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// shape controls the generated batches.
type shape struct {
	resources, scopes, items, attrs int
}

// genAttrs fills m with n attributes of every kind, keyed so that several
// resources share some keys.
func genAttrs(r *rand.Rand, m pcommon.Map, n int, depth int) {
	for i := range n {
		k := fmt.Sprintf("key.%d", i)
		switch (i + r.IntN(8)) % 8 {
		case 0:
			m.PutStr(k, fmt.Sprintf("value-%d", r.IntN(1000)))
		case 1:
			m.PutBool(k, r.IntN(2) == 0)
		case 2:
			m.PutInt(k, r.Int64()-math.MaxInt64/2)
		case 3:
			m.PutDouble(k, []float64{1.5, -0.0, 1e21, 1e-7, math.Inf(1), math.NaN(), 123456.789}[r.IntN(7)])
		case 4:
			m.PutEmptyBytes(k).FromRaw([]byte{byte(r.IntN(256)), 0, 255})
		case 5:
			if depth < 2 {
				s := m.PutEmptySlice(k)
				s.AppendEmpty().SetStr("a")
				s.AppendEmpty().SetInt(int64(r.IntN(10)))
				genAttrs(r, s.AppendEmpty().SetEmptyMap(), 2, depth+1)
			} else {
				m.PutStr(k, "leaf")
			}
		case 6:
			if depth < 2 {
				genAttrs(r, m.PutEmptyMap(k), 3, depth+1)
			} else {
				m.PutInt(k, 7)
			}
		case 7:
			m.PutEmpty(k)
		}
	}
}

func genResource(r *rand.Rand, res pcommon.Resource, i, attrs int) {
	res.Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", i))
	genAttrs(r, res.Attributes(), attrs, 0)
	res.SetDroppedAttributesCount(uint32(i % 2))
}

func genScope(r *rand.Rand, sc pcommon.InstrumentationScope, j int) {
	sc.SetName(fmt.Sprintf("scope-%d", j))
	sc.SetVersion("v1")
	genAttrs(r, sc.Attributes(), 2, 0)
}

func genTraces(seed uint64, sh shape) ptrace.Traces {
	r := rand.New(rand.NewPCG(seed, 1))
	td := ptrace.NewTraces()
	for i := range sh.resources {
		rs := td.ResourceSpans().AppendEmpty()
		genResource(r, rs.Resource(), i, sh.attrs)
		rs.SetSchemaUrl("https://example.com/r")
		for j := range sh.scopes {
			ss := rs.ScopeSpans().AppendEmpty()
			genScope(r, ss.Scope(), j)
			ss.SetSchemaUrl("https://example.com/s")
			for k := range sh.items {
				sp := ss.Spans().AppendEmpty()
				var tid [16]byte
				var sid [8]byte
				binary.LittleEndian.PutUint64(tid[:], r.Uint64())
				binary.LittleEndian.PutUint64(sid[:], r.Uint64()|1)
				sp.SetTraceID(tid)
				sp.SetSpanID(sid)
				sp.SetName(fmt.Sprintf("span-%d", k))
				sp.SetKind(ptrace.SpanKind(k % 6))
				sp.SetStartTimestamp(pcommon.Timestamp(1e18 + uint64(k)))
				sp.SetEndTimestamp(pcommon.Timestamp(1e18 + uint64(k) + 1000))
				genAttrs(r, sp.Attributes(), sh.attrs, 0)
				sp.Status().SetCode(ptrace.StatusCode(k % 3))
				sp.Status().SetMessage("ok")
				sp.SetFlags(uint32(k))
				genSpanDetails(sp, k)
			}
		}
	}
	return td
}

func genLogs(seed uint64, sh shape) plog.Logs {
	r := rand.New(rand.NewPCG(seed, 2))
	ld := plog.NewLogs()
	for i := range sh.resources {
		rl := ld.ResourceLogs().AppendEmpty()
		genResource(r, rl.Resource(), i, sh.attrs)
		for j := range sh.scopes {
			sl := rl.ScopeLogs().AppendEmpty()
			genScope(r, sl.Scope(), j)
			for k := range sh.items {
				lr := sl.LogRecords().AppendEmpty()
				lr.SetTimestamp(pcommon.Timestamp(1e18 + uint64(k)))
				lr.SetObservedTimestamp(pcommon.Timestamp(2e18 + uint64(k)))
				lr.SetSeverityNumber(plog.SeverityNumber(k % 24))
				lr.SetSeverityText("INFO")
				if (k+i)%8 != 7 { // genLogDetails leaves this body empty
					lr.Body().SetStr(fmt.Sprintf("log line %d", k))
				}
				genAttrs(r, lr.Attributes(), sh.attrs, 0)
				lr.SetFlags(plog.LogRecordFlags(k % 2))
				lr.SetEventName("ev")
				genLogDetails(lr, k+i)
			}
		}
	}
	return ld
}

func genMetrics(seed uint64, sh shape) pmetric.Metrics {
	r := rand.New(rand.NewPCG(seed, 3))
	md := pmetric.NewMetrics()
	for i := range sh.resources {
		rm := md.ResourceMetrics().AppendEmpty()
		genResource(r, rm.Resource(), i, sh.attrs)
		for j := range sh.scopes {
			sm := rm.ScopeMetrics().AppendEmpty()
			genScope(r, sm.Scope(), j)
			for k := range sh.items {
				m := sm.Metrics().AppendEmpty()
				m.SetName(fmt.Sprintf("metric.%d", k))
				m.SetDescription("d")
				m.SetUnit("1")
				if k%4 == 3 {
					m.Metadata().PutStr("meta", "m")
				}
				points := 1 + r.IntN(4)
				switch k % 6 {
				case 0:
					dps := m.SetEmptyGauge().DataPoints()
					for p := range points {
						dp := dps.AppendEmpty()
						dp.SetTimestamp(pcommon.Timestamp(p))
						dp.SetDoubleValue(float64(p) / 3)
						genAttrs(r, dp.Attributes(), 2, 0)
						genExemplars(r, dp.Exemplars(), p)
						dp.SetFlags(pmetric.DataPointFlags(p % 2))
					}
				case 1:
					s := m.SetEmptySum()
					s.SetIsMonotonic(true)
					s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
					for p := range points {
						dp := s.DataPoints().AppendEmpty()
						dp.SetStartTimestamp(1)
						dp.SetTimestamp(pcommon.Timestamp(p + 2))
						dp.SetIntValue(int64(p) - 2)
						genAttrs(r, dp.Attributes(), 2, 0)
						genExemplars(r, dp.Exemplars(), p+1)
					}
				case 2:
					h := m.SetEmptyHistogram()
					h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
					for p := range points {
						dp := h.DataPoints().AppendEmpty()
						dp.SetTimestamp(pcommon.Timestamp(p))
						dp.SetCount(uint64(p + 3))
						dp.SetSum(float64(p))
						dp.BucketCounts().FromRaw([]uint64{1, 1, uint64(p + 1)})
						dp.ExplicitBounds().FromRaw([]float64{1, 10})
						genAttrs(r, dp.Attributes(), 2, 0)
						if p%2 == 0 {
							dp.SetMin(-0.5)
							dp.SetMax(float64(p) * 7.25)
						}
						if p == 1 {
							dp.RemoveSum()
						}
						dp.SetFlags(1)
						genExemplars(r, dp.Exemplars(), p)
					}
				case 3:
					h := m.SetEmptyExponentialHistogram()
					h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
					for p := range points {
						dp := h.DataPoints().AppendEmpty()
						dp.SetTimestamp(pcommon.Timestamp(p))
						dp.SetCount(uint64(p + 2))
						dp.SetScale(int32(p) - 1)
						dp.SetZeroCount(1)
						dp.Positive().SetOffset(int32(-p))
						dp.Positive().BucketCounts().FromRaw([]uint64{1, uint64(p)})
						genAttrs(r, dp.Attributes(), 2, 0)
						dp.SetStartTimestamp(pcommon.Timestamp(p + 1))
						dp.Negative().SetOffset(int32(p) * 3)
						dp.Negative().BucketCounts().FromRaw([]uint64{uint64(p), 1 << 40, 0, 5})
						dp.SetZeroThreshold(1e-9)
						dp.SetSum(float64(p) - 0.5)
						if p%2 == 1 {
							dp.SetMin(-3)
							dp.SetMax(9.5)
						}
						dp.SetFlags(pmetric.DataPointFlags(p % 2))
						genExemplars(r, dp.Exemplars(), p)
					}
				case 4:
					s := m.SetEmptySummary()
					for p := range points {
						dp := s.DataPoints().AppendEmpty()
						dp.SetTimestamp(pcommon.Timestamp(p))
						dp.SetCount(uint64(p))
						dp.SetSum(1.25)
						q := dp.QuantileValues().AppendEmpty()
						q.SetQuantile(0.5)
						q.SetValue(float64(p))
						q = dp.QuantileValues().AppendEmpty()
						q.SetQuantile(0.99)
						q.SetValue(float64(p) * 1.5)
						genAttrs(r, dp.Attributes(), 2, 0)
						dp.SetStartTimestamp(pcommon.Timestamp(p))
						dp.SetFlags(pmetric.DataPointFlags(p % 2))
					}
				case 5:
					// A metric without data counts zero points.
				}
			}
		}
	}
	return md
}

func randIDs(r *rand.Rand) (pcommon.TraceID, pcommon.SpanID) {
	var tid [16]byte
	var sid [8]byte
	binary.LittleEndian.PutUint64(tid[:], r.Uint64())
	binary.LittleEndian.PutUint64(tid[8:], r.Uint64())
	binary.LittleEndian.PutUint64(sid[:], r.Uint64()|1)
	return tid, sid
}

// genSpanDetails adds what the item views read beyond the basics: parent,
// trace state, dropped counts, events and links, in varying numbers. It
// draws from its own generator so that the rest of the batch stays as it
// was, and keeps event and link attributes scalar so spans stay small.
func genSpanDetails(sp ptrace.Span, k int) {
	r := rand.New(rand.NewPCG(uint64(k), 4))
	if k%2 == 1 {
		_, pid := randIDs(r)
		sp.SetParentSpanID(pid)
	}
	if k%3 == 1 {
		sp.TraceState().FromRaw("vendor=a,other=b")
	}
	sp.SetDroppedAttributesCount(uint32(k % 2))
	sp.SetDroppedEventsCount(uint32(k % 3))
	sp.SetDroppedLinksCount(uint32(k % 4))
	for e := range k % 3 {
		ev := sp.Events().AppendEmpty()
		ev.SetName(fmt.Sprintf("event-%d", e))
		ev.SetTimestamp(pcommon.Timestamp(1e18 + uint64(k*10+e)))
		genAttrs(r, ev.Attributes(), 1, 2)
		ev.SetDroppedAttributesCount(uint32(e))
	}
	for l := range (k + 1) % 3 {
		lk := sp.Links().AppendEmpty()
		tid, sid := randIDs(r)
		lk.SetTraceID(tid)
		lk.SetSpanID(sid)
		if l == 1 {
			lk.TraceState().FromRaw("k=v")
		}
		genAttrs(r, lk.Attributes(), 1+l, 2)
		lk.SetDroppedAttributesCount(uint32(l))
		lk.SetFlags(0x101 * uint32(l))
	}
}

// genLogDetails varies the body kind over k%8 (7: the caller leaves the body
// empty) and sets ids and dropped counts.
func genLogDetails(lr plog.LogRecord, k int) {
	r := rand.New(rand.NewPCG(uint64(k), 5))
	switch k % 8 {
	case 1:
		lr.Body().SetInt(int64(k) - 5)
	case 2:
		lr.Body().SetDouble(float64(k) / 7)
	case 3:
		lr.Body().SetBool(true)
	case 4:
		lr.Body().SetEmptyBytes().FromRaw([]byte{0, 1, 2, byte(k)})
	case 5:
		genAttrs(r, lr.Body().SetEmptyMap(), 3, 0)
	case 6:
		s := lr.Body().SetEmptySlice()
		s.AppendEmpty().SetStr("x")
		s.AppendEmpty().SetDouble(2.5)
	}
	if k%2 == 0 {
		tid, sid := randIDs(r)
		lr.SetTraceID(tid)
		lr.SetSpanID(sid)
	}
	lr.SetDroppedAttributesCount(uint32(k % 3))
}

// genExemplars appends n exemplars alternating double and int values.
func genExemplars(r *rand.Rand, es pmetric.ExemplarSlice, n int) {
	for i := range n {
		e := es.AppendEmpty()
		e.SetTimestamp(pcommon.Timestamp(100 + i))
		if i%2 == 0 {
			e.SetDoubleValue(float64(i) + 0.25)
		} else {
			e.SetIntValue(-int64(i))
		}
		tid, sid := randIDs(r)
		e.SetTraceID(tid)
		e.SetSpanID(sid)
		genAttrs(r, e.FilteredAttributes(), i, 0)
	}
}
