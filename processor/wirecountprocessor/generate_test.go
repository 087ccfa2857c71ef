// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor

import (
	"fmt"
	"math/rand/v2"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// batchShape says how big a generated batch is: resources, scopes per
// resource and items per scope (randomised up to the given number when
// varied is set).
type batchShape struct {
	resources, scopes, items int
	varied                   bool
}

func (s batchShape) n(r *rand.Rand, max int) int {
	if !s.varied {
		return max
	}
	return r.IntN(max + 1)
}

// fillResource gives a resource attributes drawn so that group keys are
// sometimes missing, sometimes not strings, and values repeat across
// resources.
func fillResource(r *rand.Rand, res pcommon.Resource) {
	attrs := res.Attributes()
	if r.IntN(8) != 0 {
		attrs.PutStr("service.name", fmt.Sprintf("svc-%d", r.IntN(6)))
	}
	switch r.IntN(4) {
	case 0:
	case 1:
		attrs.PutInt("tenant", int64(r.IntN(3)))
	default:
		attrs.PutStr("tenant", fmt.Sprintf("tenant-%c", 'a'+rune(r.IntN(3))))
	}
	if r.IntN(2) == 0 {
		attrs.PutBool("canary", r.IntN(2) == 0)
	}
	switch r.IntN(3) {
	case 0:
		attrs.PutEmptyBytes("blob").FromRaw([]byte{byte(r.IntN(4)), 0xff})
	case 1:
		attrs.PutEmpty("blob")
	}
	attrs.PutStr("host.name", fmt.Sprintf("host-%d", r.IntN(1000)))
	attrs.PutDouble("padding", r.Float64())
}

func fillAttrs(r *rand.Rand, m pcommon.Map, n int) {
	for i := range n {
		m.PutStr(fmt.Sprintf("attr.%d", i), fmt.Sprintf("value-%d", r.IntN(1000)))
	}
}

func generateTraces(r *rand.Rand, shape batchShape) ptrace.Traces {
	td := ptrace.NewTraces()
	for range shape.n(r, shape.resources) {
		rs := td.ResourceSpans().AppendEmpty()
		fillResource(r, rs.Resource())
		for range shape.n(r, shape.scopes) {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName("scope")
			for range shape.n(r, shape.items) {
				span := ss.Spans().AppendEmpty()
				span.SetName("operation")
				span.SetTraceID(pcommon.TraceID{1, byte(r.IntN(256))})
				span.SetSpanID(pcommon.SpanID{2, byte(r.IntN(256))})
				span.SetStartTimestamp(pcommon.Timestamp(r.Uint64N(1 << 62)))
				fillAttrs(r, span.Attributes(), 10)
			}
		}
	}
	return td
}

func generateLogs(r *rand.Rand, shape batchShape) plog.Logs {
	ld := plog.NewLogs()
	for range shape.n(r, shape.resources) {
		rl := ld.ResourceLogs().AppendEmpty()
		fillResource(r, rl.Resource())
		for range shape.n(r, shape.scopes) {
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName("scope")
			for range shape.n(r, shape.items) {
				lr := sl.LogRecords().AppendEmpty()
				lr.Body().SetStr("something happened")
				lr.SetTimestamp(pcommon.Timestamp(r.Uint64N(1 << 62)))
				fillAttrs(r, lr.Attributes(), 10)
			}
		}
	}
	return ld
}

// generateMetrics spreads a scope's data points over metrics of every
// type, a few points each.
func generateMetrics(r *rand.Rand, shape batchShape) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for range shape.n(r, shape.resources) {
		rm := md.ResourceMetrics().AppendEmpty()
		fillResource(r, rm.Resource())
		for range shape.n(r, shape.scopes) {
			sm := rm.ScopeMetrics().AppendEmpty()
			sm.Scope().SetName("scope")
			points := shape.n(r, shape.items)
			for kind := 0; points > 0; kind++ {
				n := min(points, 1+r.IntN(4))
				points -= n
				m := sm.Metrics().AppendEmpty()
				m.SetName(fmt.Sprintf("metric.%d", kind))
				switch kind % 5 {
				case 0:
					g := m.SetEmptyGauge()
					for range n {
						dp := g.DataPoints().AppendEmpty()
						dp.SetDoubleValue(r.Float64())
						fillAttrs(r, dp.Attributes(), 10)
					}
				case 1:
					sum := m.SetEmptySum()
					for range n {
						dp := sum.DataPoints().AppendEmpty()
						dp.SetIntValue(r.Int64())
						fillAttrs(r, dp.Attributes(), 10)
					}
				case 2:
					h := m.SetEmptyHistogram()
					for range n {
						dp := h.DataPoints().AppendEmpty()
						dp.BucketCounts().FromRaw([]uint64{1, 2, 3})
						dp.ExplicitBounds().FromRaw([]float64{1, 10})
						fillAttrs(r, dp.Attributes(), 10)
					}
				case 3:
					eh := m.SetEmptyExponentialHistogram()
					for range n {
						dp := eh.DataPoints().AppendEmpty()
						dp.Positive().BucketCounts().FromRaw([]uint64{4, 5})
						fillAttrs(r, dp.Attributes(), 10)
					}
				default:
					s := m.SetEmptySummary()
					for range n {
						dp := s.DataPoints().AppendEmpty()
						dp.QuantileValues().AppendEmpty().SetValue(r.Float64())
						fillAttrs(r, dp.Attributes(), 10)
					}
				}
			}
		}
	}
	return md
}
