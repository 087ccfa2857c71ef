// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The PayloadSDK builders: items shaped like the output of an instrumented
// HTTP service (OpenTelemetry SDK with semantic conventions), so that the
// bytes per item and the share of strings are realistic. The values are
// fixed functions of the indexes: every run sends the same bytes.

func fillSDKResource(r pcommon.Resource, i int) {
	a := r.Attributes()
	a.PutStr("service.name", "bench-service-"+strconv.Itoa(i))
	a.PutStr("service.namespace", "shop")
	a.PutStr("service.version", "2.14.0")
	a.PutStr("service.instance.id", "627cc493-f310-47de-96bd-71410b7dec09-"+strconv.Itoa(i))
	a.PutStr("deployment.environment.name", "production")
	a.PutStr("host.name", "ip-10-0-3-"+strconv.Itoa(10+i%200)+".eu-west-1.compute.internal")
	a.PutStr("host.arch", "arm64")
	a.PutStr("os.type", "linux")
	a.PutStr("k8s.namespace.name", "shop")
	a.PutStr("k8s.pod.name", "bench-service-"+strconv.Itoa(i)+"-7c9d8b6f5-x2x9q")
	a.PutStr("k8s.node.name", "ip-10-0-3-"+strconv.Itoa(10+i%200)+".eu-west-1.compute.internal")
	a.PutStr("telemetry.sdk.name", "opentelemetry")
	a.PutStr("telemetry.sdk.language", "go")
	a.PutStr("telemetry.sdk.version", "1.38.0")
}

func fillSDKScope(s pcommon.InstrumentationScope) {
	s.SetName("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp")
	s.SetVersion("0.63.0")
}

func fillSDKAttributes(a pcommon.Map, i int) {
	id := strconv.Itoa(100000 + i)
	a.PutStr("http.request.method", "GET")
	a.PutStr("http.route", "/api/v1/orders/{id}")
	a.PutInt("http.response.status_code", 200)
	a.PutInt("http.request.body.size", 0)
	a.PutInt("http.response.body.size", int64(1800+i%400))
	a.PutStr("url.scheme", "https")
	a.PutStr("url.path", "/api/v1/orders/"+id)
	a.PutStr("url.query", "include=items,payments&currency=EUR")
	a.PutStr("server.address", "orders.shop.svc.cluster.local")
	a.PutInt("server.port", 8443)
	a.PutStr("client.address", "10.0.7."+strconv.Itoa(i%250))
	a.PutInt("client.port", int64(40000+i%20000))
	a.PutStr("network.protocol.version", "1.1")
	a.PutStr("network.peer.address", "10.0.7."+strconv.Itoa(i%250))
	a.PutStr("user_agent.original", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/128.0.0.0 Safari/537.36")
	a.PutStr("enduser.id", "customer-"+id)
	a.PutStr("shop.order.id", "ord_"+id+"_2c1f0e")
	a.PutStr("shop.tenant", "tenant-"+strconv.Itoa(i%17))
	a.PutBool("shop.cache.hit", i%3 == 0)
	a.PutDouble("shop.order.total", float64(i%1000)+0.99)
}

func buildSDKTraces(shape Shape) ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range shape.Resources {
		rs := td.ResourceSpans().AppendEmpty()
		fillSDKResource(rs.Resource(), r)
		rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
		ss := rs.ScopeSpans().AppendEmpty()
		fillSDKScope(ss.Scope())
		for i := range shape.ItemsPerResource {
			s := ss.Spans().AppendEmpty()
			s.SetTraceID(pcommon.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, byte(r), byte(i)})
			s.SetSpanID(pcommon.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, byte(r), byte(i)})
			s.SetParentSpanID(pcommon.SpanID{0x53, 0x99, 0x5c, 0x3f, 0x42, 0xcd, byte(r), byte(i)})
			s.TraceState().FromRaw("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
			s.SetName("GET /api/v1/orders/{id}")
			s.SetKind(ptrace.SpanKindServer)
			s.SetStartTimestamp(baseTime + pcommon.Timestamp(i)*1000)
			s.SetEndTimestamp(baseTime + pcommon.Timestamp(i)*1000 + 25_000_000)
			fillSDKAttributes(s.Attributes(), i)
			ev := s.Events().AppendEmpty()
			ev.SetName("cache.lookup")
			ev.SetTimestamp(baseTime + pcommon.Timestamp(i)*1000 + 1_000_000)
			ev.Attributes().PutStr("cache.key", "order:"+strconv.Itoa(100000+i))
			ev.Attributes().PutBool("cache.hit", i%3 == 0)
			link := s.Links().AppendEmpty()
			link.SetTraceID(pcommon.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, byte(r), byte(i)})
			link.SetSpanID(pcommon.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, byte(r), byte(i)})
			link.Attributes().PutStr("messaging.operation.type", "process")
			s.Status().SetCode(ptrace.StatusCodeOk)
		}
	}
	return td
}

func buildSDKMetrics(shape Shape) pmetric.Metrics {
	md := pmetric.NewMetrics()
	bounds := []float64{0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000}
	for r := range shape.Resources {
		rm := md.ResourceMetrics().AppendEmpty()
		fillSDKResource(rm.Resource(), r)
		sm := rm.ScopeMetrics().AppendEmpty()
		fillSDKScope(sm.Scope())
		// A third each: request duration histograms, cumulative counters and
		// gauges, one data point per metric.
		for i := range shape.ItemsPerResource {
			m := sm.Metrics().AppendEmpty()
			switch i % 3 {
			case 0:
				m.SetName("http.server.request.duration." + strconv.Itoa(i))
				m.SetDescription("Duration of HTTP server requests.")
				m.SetUnit("s")
				h := m.SetEmptyHistogram()
				h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
				dp := h.DataPoints().AppendEmpty()
				dp.SetStartTimestamp(baseTime)
				dp.SetTimestamp(baseTime + 10_000_000_000)
				dp.ExplicitBounds().FromRaw(bounds)
				counts := make([]uint64, len(bounds)+1)
				var total uint64
				for k := range counts {
					counts[k] = uint64((i + k*7) % 50)
					total += counts[k]
				}
				dp.BucketCounts().FromRaw(counts)
				dp.SetCount(total)
				dp.SetSum(float64(total) * 0.042)
				dp.SetMin(0.001)
				dp.SetMax(4.2)
				fillSDKMetricAttributes(dp.Attributes(), i)
			case 1:
				m.SetName("http.server.request.body.size." + strconv.Itoa(i))
				m.SetDescription("Size of HTTP server request bodies.")
				m.SetUnit("By")
				sum := m.SetEmptySum()
				sum.SetIsMonotonic(true)
				sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
				dp := sum.DataPoints().AppendEmpty()
				dp.SetStartTimestamp(baseTime)
				dp.SetTimestamp(baseTime + 10_000_000_000)
				dp.SetIntValue(int64(i) * 1024)
				fillSDKMetricAttributes(dp.Attributes(), i)
			default:
				m.SetName("process.runtime.go.goroutines." + strconv.Itoa(i))
				m.SetDescription("Number of goroutines that currently exist.")
				m.SetUnit("{goroutine}")
				dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
				dp.SetTimestamp(baseTime + 10_000_000_000)
				dp.SetIntValue(int64(40 + i%60))
				fillSDKMetricAttributes(dp.Attributes(), i)
			}
		}
	}
	return md
}

func fillSDKMetricAttributes(a pcommon.Map, i int) {
	a.PutStr("http.request.method", "GET")
	a.PutStr("http.route", "/api/v1/orders/{id}")
	a.PutInt("http.response.status_code", 200)
	a.PutStr("url.scheme", "https")
	a.PutStr("server.address", "orders.shop.svc.cluster.local")
	a.PutInt("server.port", 8443)
	a.PutStr("network.protocol.version", "1.1")
	a.PutStr("shop.tenant", "tenant-"+strconv.Itoa(i%17))
}

func buildSDKLogs(shape Shape) plog.Logs {
	ld := plog.NewLogs()
	for r := range shape.Resources {
		rl := ld.ResourceLogs().AppendEmpty()
		fillSDKResource(rl.Resource(), r)
		sl := rl.ScopeLogs().AppendEmpty()
		fillSDKScope(sl.Scope())
		for i := range shape.ItemsPerResource {
			l := sl.LogRecords().AppendEmpty()
			l.SetTimestamp(baseTime + pcommon.Timestamp(i)*1000)
			l.SetObservedTimestamp(baseTime + pcommon.Timestamp(i)*1000 + 5000)
			l.SetSeverityNumber(plog.SeverityNumberInfo)
			l.SetSeverityText("INFO")
			l.SetTraceID(pcommon.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, byte(r), byte(i)})
			l.SetSpanID(pcommon.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, byte(r), byte(i)})
			l.Body().SetStr("order ord_" + strconv.Itoa(100000+i) + "_2c1f0e served to customer-" + strconv.Itoa(100000+i) +
				" in 25.3 ms: 3 items, 1 payment, cache hit=" + strconv.FormatBool(i%3 == 0) + ", upstream inventory 7.1 ms, pricing 4.8 ms")
			a := l.Attributes()
			a.PutStr("code.function.name", "github.com/shop/orders/internal/api.(*Handler).GetOrder")
			a.PutStr("code.file.path", "/src/orders/internal/api/handler.go")
			a.PutInt("code.line.number", int64(120+i%40))
			a.PutStr("http.request.method", "GET")
			a.PutStr("http.route", "/api/v1/orders/{id}")
			a.PutInt("http.response.status_code", 200)
			a.PutStr("enduser.id", "customer-"+strconv.Itoa(100000+i))
			a.PutStr("shop.tenant", "tenant-"+strconv.Itoa(i%17))
		}
	}
	return ld
}
