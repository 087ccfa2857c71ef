// SPDX-License-Identifier: Apache-2.0

package wirebench

import (
	"encoding/binary"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// Shape is the size of a generated request: Resources resources, each with
// Scopes scopes of Items items (spans, data points or log records). Every
// resource carries Attrs attributes (service.name first, LookupKey last, the
// ones between of mixed kinds) and so does every item.
type Shape struct {
	Resources, Scopes, Items, Attrs int
}

// String names the shape the way the benchmarks do: "10x100" for 10
// resources of 100 items in one scope, with the scope count and the
// attribute count added when they are not the defaults (1 and 5).
func (s Shape) String() string {
	name := fmt.Sprintf("%dx%d", s.Resources, s.Scopes*s.Items)
	if s.Scopes != 1 {
		name = fmt.Sprintf("%dx%dx%d", s.Resources, s.Scopes, s.Items)
	}
	if s.Attrs != 5 {
		name += fmt.Sprintf("a%d", s.Attrs)
	}
	return name
}

// ItemCount is the number of items a request of this shape holds.
func (s Shape) ItemCount() int { return s.Resources * s.Scopes * s.Items }

// Encoding is how the request bytes are laid out.
type Encoding uint8

const (
	// EncodingPdata is the request as pdata's ProtoMarshaler writes it (what a
	// Collector's OTLP exporter sends).
	EncodingPdata Encoding = iota + 1
	// EncodingSDK is the same content as proto.Marshal of the official OTLP
	// protos (go.opentelemetry.io/proto/otlp) writes it: what the Go SDK's
	// OTLP exporters send. Fields come in ascending field-number order.
	EncodingSDK
)

func (e Encoding) String() string {
	switch e {
	case EncodingPdata:
		return "pdata"
	case EncodingSDK:
		return "sdk"
	}
	return "unknown"
}

// LookupKey is the resource attribute the lookup benchmarks read: a string
// attribute written last, so a lookup scans every attribute of the resource.
const LookupKey = "host.name"

// Payload is one generated request.
type Payload struct {
	Signal   otlpwire.Signal
	Encoding Encoding
	Shape    Shape
	Bytes    []byte
}

// Name is "traces/pdata/10x100a10"-style: signal, encoding and shape.
func (p Payload) Name() string {
	return p.Signal.String() + "/" + p.Encoding.String() + "/" + p.Shape.String()
}

// Generate builds the request of the given signal and shape in the given
// encoding. The content depends only on signal and shape, so the two
// encodings of one shape decode to equal pdata.
func Generate(sig otlpwire.Signal, sh Shape, enc Encoding) (Payload, error) {
	var b []byte
	var err error
	switch sig {
	case otlpwire.SignalTraces:
		b, err = (&ptrace.ProtoMarshaler{}).MarshalTraces(GenTraces(sh))
	case otlpwire.SignalMetrics:
		b, err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(GenMetrics(sh))
	case otlpwire.SignalLogs:
		b, err = (&plog.ProtoMarshaler{}).MarshalLogs(GenLogs(sh))
	default:
		return Payload{}, otlpwire.ErrUnknownSignal
	}
	if err != nil {
		return Payload{}, err
	}
	if enc == EncodingSDK {
		if b, err = sdkOrder(sig, b); err != nil {
			return Payload{}, err
		}
	}
	return Payload{Signal: sig, Encoding: enc, Shape: sh, Bytes: b}, nil
}

// sdkOrder re-encodes pdata's bytes with protobuf-go, as the Go SDK does.
// TracesData, MetricsData and LogsData have the wire layout of the export
// requests (field 1, repeated ResourceX).
func sdkOrder(sig otlpwire.Signal, b []byte) ([]byte, error) {
	var m proto.Message
	switch sig {
	case otlpwire.SignalTraces:
		m = &tracepb.TracesData{}
	case otlpwire.SignalMetrics:
		m = &metricspb.MetricsData{}
	default:
		m = &logspb.LogsData{}
	}
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, err
	}
	return proto.Marshal(m)
}

// putAttrs writes n attributes: first (when not empty) as a string, then
// mixed kinds, then last (when not empty) as a string.
func putAttrs(m pcommon.Map, n int, seed int, first, last string) {
	m.EnsureCapacity(n)
	for i := range n {
		switch {
		case i == 0 && first != "":
			m.PutStr(first, fmt.Sprintf("svc-%d", seed))
		case i == n-1 && last != "":
			m.PutStr(last, fmt.Sprintf("host-%d.example.internal", seed))
		default:
			k := fmt.Sprintf("attr.%d", i)
			switch i % 4 {
			case 0:
				m.PutInt(k, int64(seed*31+i))
			case 1:
				m.PutStr(k, fmt.Sprintf("value-%d-%d", seed%97, i))
			case 2:
				m.PutBool(k, (seed+i)%2 == 0)
			case 3:
				m.PutDouble(k, float64(seed)+0.25*float64(i))
			}
		}
	}
}

func putResource(r pcommon.Resource, i int, sh Shape) {
	putAttrs(r.Attributes(), max(sh.Attrs, 2), i, "service.name", LookupKey)
}

func putScope(s pcommon.InstrumentationScope, j int) {
	s.SetName(fmt.Sprintf("io.example/instrumentation-%d", j))
	s.SetVersion("1.4.2")
}

func ids(i, j, k int) (tid [16]byte, sid [8]byte) {
	binary.BigEndian.PutUint64(tid[:8], uint64(i+1)*0x9e3779b97f4a7c15)
	binary.BigEndian.PutUint64(tid[8:], uint64(j*100003+k+1)*0xbf58476d1ce4e5b9)
	binary.BigEndian.PutUint64(sid[:], uint64(k+1)*0x94d049bb133111eb)
	return tid, sid
}

// GenTraces returns traces of the given shape.
func GenTraces(sh Shape) ptrace.Traces {
	td := ptrace.NewTraces()
	for i := range sh.Resources {
		rs := td.ResourceSpans().AppendEmpty()
		putResource(rs.Resource(), i, sh)
		rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
		for j := range sh.Scopes {
			ss := rs.ScopeSpans().AppendEmpty()
			putScope(ss.Scope(), j)
			ss.Spans().EnsureCapacity(sh.Items)
			for k := range sh.Items {
				sp := ss.Spans().AppendEmpty()
				tid, sid := ids(i, j, k)
				sp.SetTraceID(tid)
				sp.SetSpanID(sid)
				if k > 0 {
					_, parent := ids(i, j, k-1)
					sp.SetParentSpanID(parent)
				}
				sp.SetName(fmt.Sprintf("GET /api/v1/items/%d", k%50))
				sp.SetKind(ptrace.SpanKind(1 + k%5))
				sp.SetStartTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + uint64(k)*1000))
				sp.SetEndTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + uint64(k)*1000 + 250_000))
				putAttrs(sp.Attributes(), sh.Attrs, k, "", "")
				sp.Status().SetCode(ptrace.StatusCode(k % 3))
			}
		}
	}
	return td
}

// GenLogs returns logs of the given shape.
func GenLogs(sh Shape) plog.Logs {
	ld := plog.NewLogs()
	for i := range sh.Resources {
		rl := ld.ResourceLogs().AppendEmpty()
		putResource(rl.Resource(), i, sh)
		for j := range sh.Scopes {
			sl := rl.ScopeLogs().AppendEmpty()
			putScope(sl.Scope(), j)
			sl.LogRecords().EnsureCapacity(sh.Items)
			for k := range sh.Items {
				lr := sl.LogRecords().AppendEmpty()
				lr.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + uint64(k)))
				lr.SetObservedTimestamp(pcommon.Timestamp(1_700_000_000_000_000_500 + uint64(k)))
				lr.SetSeverityNumber(plog.SeverityNumber(1 + k%24))
				lr.SetSeverityText("INFO")
				lr.Body().SetStr(fmt.Sprintf("request %d handled in %d ms", k, k%97))
				putAttrs(lr.Attributes(), sh.Attrs, k, "", "")
				tid, sid := ids(i, j, k)
				lr.SetTraceID(tid)
				lr.SetSpanID(sid)
			}
		}
	}
	return ld
}

// pointsPerMetric is how many data points each generated metric holds (or
// fewer, when a scope has fewer items).
const pointsPerMetric = 10

// GenMetrics returns metrics of the given shape: Items data points per scope,
// in metrics of up to 10 points that rotate through sum, gauge and histogram.
func GenMetrics(sh Shape) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for i := range sh.Resources {
		rm := md.ResourceMetrics().AppendEmpty()
		putResource(rm.Resource(), i, sh)
		for j := range sh.Scopes {
			sm := rm.ScopeMetrics().AppendEmpty()
			putScope(sm.Scope(), j)
			for k, n := 0, 0; k < sh.Items; n++ {
				pts := min(pointsPerMetric, sh.Items-k)
				m := sm.Metrics().AppendEmpty()
				m.SetName(fmt.Sprintf("app.requests.metric_%d", n))
				m.SetUnit("1")
				for p := range pts {
					ts := pcommon.Timestamp(1_700_000_000_000_000_000 + uint64(k+p))
					switch n % 3 {
					case 0:
						s := m.Sum()
						if p == 0 {
							s = m.SetEmptySum()
							s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
							s.SetIsMonotonic(true)
						}
						dp := s.DataPoints().AppendEmpty()
						dp.SetStartTimestamp(1_600_000_000_000_000_000)
						dp.SetTimestamp(ts)
						dp.SetDoubleValue(float64(k+p) * 1.5)
						putAttrs(dp.Attributes(), sh.Attrs, k+p, "", "")
					case 1:
						g := m.Gauge()
						if p == 0 {
							g = m.SetEmptyGauge()
						}
						dp := g.DataPoints().AppendEmpty()
						dp.SetTimestamp(ts)
						dp.SetIntValue(int64(k + p))
						putAttrs(dp.Attributes(), sh.Attrs, k+p, "", "")
					case 2:
						h := m.Histogram()
						if p == 0 {
							h = m.SetEmptyHistogram()
							h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
						}
						dp := h.DataPoints().AppendEmpty()
						dp.SetStartTimestamp(1_600_000_000_000_000_000)
						dp.SetTimestamp(ts)
						dp.SetCount(uint64(10 + p))
						dp.SetSum(float64(k+p) * 3.5)
						dp.BucketCounts().FromRaw([]uint64{1, 2, 3, uint64(4 + p)})
						dp.ExplicitBounds().FromRaw([]float64{5, 50, 500})
						putAttrs(dp.Attributes(), sh.Attrs, k+p, "", "")
					}
				}
				k += pts
			}
		}
	}
	return md
}
