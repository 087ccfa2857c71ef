// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// The benchmark fixture: 10 resources x 100 items x 10 attributes per item
// (and 10 resource attributes), one scope per resource. For metrics an item
// is a data point: each resource holds 10 gauges of 10 points.
const (
	benchResources = 10
	benchItems     = 100
	benchAttrs     = 10
)

func benchAttrsTo(m pcommon.Map, i int) {
	for a := range benchAttrs {
		m.PutStr(fmt.Sprintf("attribute.%d", a), fmt.Sprintf("value-%d-%d", i, a))
	}
}

func benchTraces() []byte {
	td := ptrace.NewTraces()
	for r := range benchResources {
		rs := td.ResourceSpans().AppendEmpty()
		benchAttrsTo(rs.Resource().Attributes(), r)
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("bench")
		for i := range benchItems {
			sp := ss.Spans().AppendEmpty()
			sp.SetName("operation")
			sp.SetTraceID([16]byte{byte(r), byte(i), 1})
			sp.SetSpanID([8]byte{byte(i), 2})
			sp.SetStartTimestamp(1e18)
			sp.SetEndTimestamp(1e18 + 1000)
			benchAttrsTo(sp.Attributes(), i)
		}
	}
	b, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	return b
}

func benchMetrics() []byte {
	md := pmetric.NewMetrics()
	for r := range benchResources {
		rm := md.ResourceMetrics().AppendEmpty()
		benchAttrsTo(rm.Resource().Attributes(), r)
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName("bench")
		for m := range benchItems / 10 {
			g := sm.Metrics().AppendEmpty()
			g.SetName(fmt.Sprintf("metric.%d", m))
			dps := g.SetEmptyGauge().DataPoints()
			for i := range 10 {
				dp := dps.AppendEmpty()
				dp.SetTimestamp(1e18)
				dp.SetDoubleValue(float64(i))
				benchAttrsTo(dp.Attributes(), i)
			}
		}
	}
	b, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	return b
}

func benchLogs() []byte {
	ld := plog.NewLogs()
	for r := range benchResources {
		rl := ld.ResourceLogs().AppendEmpty()
		benchAttrsTo(rl.Resource().Attributes(), r)
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName("bench")
		for i := range benchItems {
			lr := sl.LogRecords().AppendEmpty()
			lr.SetTimestamp(1e18)
			lr.Body().SetStr("a log line of moderate length")
			benchAttrsTo(lr.Attributes(), i)
		}
	}
	b, _ := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	return b
}

func benchFixture(sig Signal) []byte {
	switch sig {
	case SignalTraces:
		return benchTraces()
	case SignalMetrics:
		return benchMetrics()
	default:
		return benchLogs()
	}
}

// pdataCount is the pdata way: unmarshal, then count.
func pdataCount(sig Signal, b []byte) (int, error) {
	switch sig {
	case SignalTraces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		return td.SpanCount(), err
	case SignalMetrics:
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
		return md.DataPointCount(), err
	default:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
		return ld.LogRecordCount(), err
	}
}

// pdataSplit is the pdata way of making one request per resource:
// unmarshal, copy each resource into a new batch, marshal it.
func pdataSplit(sig Signal, b []byte) (int, error) {
	total := 0
	switch sig {
	case SignalTraces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			return 0, err
		}
		for _, rs := range td.ResourceSpans().All() {
			one := ptrace.NewTraces()
			rs.CopyTo(one.ResourceSpans().AppendEmpty())
			out, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(one)
			total += len(out)
		}
	case SignalMetrics:
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
		if err != nil {
			return 0, err
		}
		for _, rm := range md.ResourceMetrics().All() {
			one := pmetric.NewMetrics()
			rm.CopyTo(one.ResourceMetrics().AppendEmpty())
			out, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(one)
			total += len(out)
		}
	default:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
		if err != nil {
			return 0, err
		}
		for _, rl := range ld.ResourceLogs().All() {
			one := plog.NewLogs()
			rl.CopyTo(one.ResourceLogs().AppendEmpty())
			out, _ := (&plog.ProtoMarshaler{}).MarshalLogs(one)
			total += len(out)
		}
	}
	return total, nil
}

func BenchmarkCount(b *testing.B) {
	for _, sig := range signals {
		fx := benchFixture(sig)
		want, _ := pdataCount(sig, fx)
		if want != benchResources*benchItems {
			b.Fatalf("fixture has %d items", want)
		}
		b.Run(sig.String()+"/otlpwire", func(b *testing.B) {
			b.SetBytes(int64(len(fx)))
			b.ReportAllocs()
			req := NewRequest(sig, fx)
			for b.Loop() {
				if n, err := req.ItemCount(); err != nil || n != want {
					b.Fatal(n, err)
				}
			}
		})
		b.Run(sig.String()+"/pdata", func(b *testing.B) {
			b.SetBytes(int64(len(fx)))
			b.ReportAllocs()
			for b.Loop() {
				if n, err := pdataCount(sig, fx); err != nil || n != want {
					b.Fatal(n, err)
				}
			}
		})
	}
}

func BenchmarkSplitPerResource(b *testing.B) {
	for _, sig := range signals {
		fx := benchFixture(sig)
		b.Run(sig.String()+"/otlpwire", func(b *testing.B) {
			b.SetBytes(int64(len(fx)))
			b.ReportAllocs()
			req := NewRequest(sig, fx)
			buf := make([]byte, 0, len(fx))
			for b.Loop() {
				for rd, err := range req.Resources() {
					if err != nil {
						b.Fatal(err)
					}
					for c, err := range SplitResource(rd, 1_000_000, buf) {
						if err != nil || len(c.Request) == 0 {
							b.Fatal(err)
						}
					}
				}
			}
		})
		b.Run(sig.String()+"/otlpwire-append", func(b *testing.B) {
			b.SetBytes(int64(len(fx)))
			b.ReportAllocs()
			req := NewRequest(sig, fx)
			buf := make([]byte, 0, len(fx))
			for b.Loop() {
				for rd, err := range req.Resources() {
					if err != nil {
						b.Fatal(err)
					}
					buf = AppendRequest(buf[:0], rd)
				}
			}
		})
		b.Run(sig.String()+"/pdata", func(b *testing.B) {
			b.SetBytes(int64(len(fx)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := pdataSplit(sig, fx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSplitResourceCut(b *testing.B) {
	fx := benchTraces()
	var rd ResourceData
	for r := range NewRequest(SignalTraces, fx).Resources() {
		rd = r
		break
	}
	buf := make([]byte, 0, 64<<10)
	b.SetBytes(int64(len(rd.Bytes())))
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range SplitResource(rd, 8<<10, buf) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkResourceHash(b *testing.B) {
	fx := benchTraces()
	req := NewRequest(SignalTraces, fx)
	b.ReportAllocs()
	for b.Loop() {
		for rd := range req.Resources() {
			r, _ := rd.Resource()
			if _, err := r.Hash(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkWalkItems reads every field of every item view (walkItems: ids,
// times, names, attributes and their values, points and their buckets)
// against pdata unmarshalling the same request, after which its getters are
// plain field reads.
func BenchmarkWalkItems(b *testing.B) {
	for _, sig := range signals {
		fx := benchFixture(sig)
		want, _ := pdataCount(sig, fx)
		b.Run(sig.String()+"/otlpwire", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(fx)))
			req := NewRequest(sig, fx)
			for b.Loop() {
				var errs firstError
				n := walkItems(req, &errs)
				if errs.err != nil || (sig != SignalMetrics && n != want) {
					b.Fatalf("walked %d items (%v), want %d", n, errs.err, want)
				}
			}
		})
		b.Run(sig.String()+"/otlpwire-one-field", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(fx)))
			req := NewRequest(sig, fx)
			for b.Loop() {
				if n := walkOneField(req); n != want {
					b.Fatalf("walked %d items, want %d", n, want)
				}
			}
		})
		b.Run(sig.String()+"/pdata-unmarshal", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(fx)))
			for b.Loop() {
				if n, err := pdataCount(sig, fx); err != nil || n != want {
					b.Fatalf("pdata: %d, %v", n, err)
				}
			}
		})
	}
}

// walkOneField reads one field per item, the way a router or filter looks
// at a span's name, a log record's severity or a data point's time.
func walkOneField(req Request) int {
	n := 0
	for rd := range req.Resources() {
		for sd := range rd.Scopes() {
			switch req.Signal() {
			case SignalTraces:
				for sp := range sd.Spans() {
					if name, _ := sp.Name(); len(name) > 0 {
						n++
					}
				}
			case SignalLogs:
				for lr := range sd.LogRecords() {
					if _, err := lr.SeverityNumber(); err == nil {
						n++
					}
				}
			case SignalMetrics:
				for m := range sd.Metrics() {
					for p := range m.NumberDataPoints() {
						if _, err := p.TimeUnixNano(); err == nil {
							n++
						}
					}
				}
			}
		}
	}
	return n
}
