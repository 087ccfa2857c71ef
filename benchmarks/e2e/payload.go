// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelcol-sdp/otelcol-sdp/internal/profilestest"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// signalNames backs Signals; being an array, its length is a constant that
// sizes the per-signal counters of the sink and the floor.
var signalNames = [...]string{"traces", "metrics", "logs", "profiles"}

// Signals and protocols the harness drives, in report order. Profiles need
// the Collector feature gate service.profilesSupport (see run.go).
var (
	Signals   = signalNames[:]
	Protocols = []string{"grpc", "http"}
)

// Payload kinds: how big and how rich each item is.
const (
	// PayloadSmall items carry 5 attributes and nothing else (about 200
	// bytes a span): the harness's historical payload, cheap to decode.
	PayloadSmall = "small"
	// PayloadSDK items look like what instrumented services export (about
	// 1 KB a span): semantic-convention attributes with realistic values,
	// span events and links, status messages, log bodies of a sentence or
	// two, histograms among the metrics.
	PayloadSDK = "sdk"
)

// PayloadKinds lists the payload kinds, for flag validation.
var PayloadKinds = []string{PayloadSmall, PayloadSDK}

// Shape is the fixed shape of every request the load generator sends.
type Shape struct {
	Resources        int    // resources per request, each with its own service.name
	ItemsPerResource int    // spans, data points, log records or samples per resource
	Kind             string // PayloadSmall ("" too) or PayloadSDK
}

// Items is the number of items in one request.
func (s Shape) Items() int { return s.Resources * s.ItemsPerResource }

// Payload is one pre-marshalled OTLP export request, sent as-is by every
// client for the whole run.
type Payload struct {
	Signal string
	Items  int
	Bytes  []byte
}

// NewPayload builds the request of a signal with pdata and marshals it once.
func NewPayload(signal string, shape Shape) (Payload, error) {
	var (
		b   []byte
		err error
	)
	sdk := false
	switch shape.Kind {
	case "", PayloadSmall:
	case PayloadSDK:
		sdk = true
	default:
		return Payload{}, fmt.Errorf("unknown payload kind %q", shape.Kind)
	}
	switch signal {
	case "traces":
		td := buildTraces(shape)
		if sdk {
			td = buildSDKTraces(shape)
		}
		b, err = ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	case "metrics":
		md := buildMetrics(shape)
		if sdk {
			md = buildSDKMetrics(shape)
		}
		b, err = pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	case "logs":
		ld := buildLogs(shape)
		if sdk {
			ld = buildSDKLogs(shape)
		}
		b, err = plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	case "profiles":
		b = profilestest.Marshal(buildProfiles(shape, sdk))
	default:
		return Payload{}, fmt.Errorf("unknown signal %q", signal)
	}
	if err != nil {
		return Payload{}, err
	}
	// The sink counts with the same wire walker; check they agree here once.
	n, err := CountItems(signal, b)
	if err != nil {
		return Payload{}, err
	}
	if n != shape.Items() {
		return Payload{}, fmt.Errorf("%s payload holds %d items, want %d", signal, n, shape.Items())
	}
	return Payload{Signal: signal, Items: n, Bytes: b}, nil
}

// CountItems counts the spans, data points, log records or samples of an
// OTLP export request on the wire, without decoding it.
func CountItems(signal string, b []byte) (int, error) {
	var sig otlpwire.Signal
	switch signal {
	case "traces":
		sig = otlpwire.SignalTraces
	case "metrics":
		sig = otlpwire.SignalMetrics
	case "logs":
		sig = otlpwire.SignalLogs
	case "profiles":
		sig = otlpwire.SignalProfiles
	default:
		return 0, fmt.Errorf("unknown signal %q", signal)
	}
	return otlpwire.NewRequest(sig, b).ItemCount()
}

const baseTime = pcommon.Timestamp(1_700_000_000_000_000_000)

func fillResource(r pcommon.Resource, i int) {
	a := r.Attributes()
	a.PutStr("service.name", "bench-service-"+strconv.Itoa(i))
	a.PutStr("service.namespace", "benchmarks")
	a.PutStr("service.version", "1.4.2")
	a.PutStr("host.name", "bench-host-"+strconv.Itoa(i%3))
	a.PutStr("deployment.environment.name", "production")
}

func fillAttributes(a pcommon.Map, i int) {
	a.PutStr("http.request.method", "GET")
	a.PutStr("url.path", "/api/v1/items/"+strconv.Itoa(i))
	a.PutInt("http.response.status_code", 200)
	a.PutStr("server.address", "checkout.internal")
	a.PutBool("bench.sampled", i%2 == 0)
}

func buildTraces(shape Shape) ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range shape.Resources {
		rs := td.ResourceSpans().AppendEmpty()
		fillResource(rs.Resource(), r)
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("otelcol-sdp/benchmarks/e2e")
		for i := range shape.ItemsPerResource {
			s := ss.Spans().AppendEmpty()
			s.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, byte(r), byte(i)})
			s.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, byte(r), byte(i)})
			s.SetName("GET /api/v1/items")
			s.SetKind(ptrace.SpanKindServer)
			s.SetStartTimestamp(baseTime + pcommon.Timestamp(i)*1000)
			s.SetEndTimestamp(baseTime + pcommon.Timestamp(i)*1000 + 25_000_000)
			fillAttributes(s.Attributes(), i)
			s.Status().SetCode(ptrace.StatusCodeOk)
		}
	}
	return td
}

func buildMetrics(shape Shape) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for r := range shape.Resources {
		rm := md.ResourceMetrics().AppendEmpty()
		fillResource(rm.Resource(), r)
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName("otelcol-sdp/benchmarks/e2e")
		// One data point per metric: half gauges, half cumulative sums.
		for i := range shape.ItemsPerResource {
			m := sm.Metrics().AppendEmpty()
			m.SetName("bench.metric." + strconv.Itoa(i))
			m.SetUnit("1")
			var dp pmetric.NumberDataPoint
			if i%2 == 0 {
				dp = m.SetEmptyGauge().DataPoints().AppendEmpty()
			} else {
				sum := m.SetEmptySum()
				sum.SetIsMonotonic(true)
				sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
				dp = sum.DataPoints().AppendEmpty()
			}
			dp.SetStartTimestamp(baseTime)
			dp.SetTimestamp(baseTime + 10_000_000_000)
			dp.SetDoubleValue(float64(i) * 1.5)
			fillAttributes(dp.Attributes(), i)
		}
	}
	return md
}

func buildLogs(shape Shape) plog.Logs {
	ld := plog.NewLogs()
	for r := range shape.Resources {
		rl := ld.ResourceLogs().AppendEmpty()
		fillResource(rl.Resource(), r)
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName("otelcol-sdp/benchmarks/e2e")
		for i := range shape.ItemsPerResource {
			l := sl.LogRecords().AppendEmpty()
			l.SetTimestamp(baseTime + pcommon.Timestamp(i)*1000)
			l.SetObservedTimestamp(baseTime + pcommon.Timestamp(i)*1000)
			l.SetSeverityNumber(plog.SeverityNumberInfo)
			l.SetSeverityText("INFO")
			l.Body().SetStr("request served: GET /api/v1/items in 25 ms")
			fillAttributes(l.Attributes(), i)
		}
	}
	return ld
}

// buildProfiles builds a profiles request as a profiler sends one: one
// dictionary shared by every resource, and under each resource one scope
// with one CPU profile of shape.ItemsPerResource samples whose stacks are
// drawn from that dictionary. Resources carry the attributes of the other
// signals' payloads of the same kind (small or sdk); the sdk kind also has
// deeper stacks. The dictionary grows with the samples of the request (half
// as many stacks and functions as samples, as many locations), so that the
// bytes per sample stay about the same whatever the request's shape. The
// seed is fixed: every run sends the same bytes.
func buildProfiles(shape Shape, sdk bool) pprofile.Profiles {
	n := shape.Items()
	sh := profilestest.Shape{
		Resources: shape.Resources, Scopes: 1, Profiles: 1, Samples: shape.ItemsPerResource,
		Functions: max(4, n/2), Locations: max(8, n), Stacks: max(4, n/2), Depth: 16,
		Resource: func(_ *rand.Rand, i int, res pcommon.Resource) { fillResource(res, i) },
		Scope:    func(_ *rand.Rand, _ int, sc pcommon.InstrumentationScope) { sc.SetName("otelcol-sdp/benchmarks/e2e") },
	}
	if sdk {
		sh.Depth = 32
		sh.Resource = func(_ *rand.Rand, i int, res pcommon.Resource) { fillSDKResource(res, i) }
		sh.Scope = func(_ *rand.Rand, _ int, sc pcommon.InstrumentationScope) {
			sc.SetName("go.opentelemetry.io/ebpf-profiler")
		}
	}
	return profilestest.Generate(1, sh)
}
