package wirecountprocessor

import (
	"context"
	"math/rand/v2"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/pipeline"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

func sumSeries(s series) int64 {
	var total int64
	for _, v := range s {
		total += v
	}
	return total
}

// FuzzCountRequest feeds arbitrary bytes to the request bytes path: it must
// never panic, must count nothing when it returns an error, and, when pdata
// (as the OTLP receiver reads them) also accepts the bytes, must count as many items as the pdata path.
func FuzzCountRequest(f *testing.F) {
	r := rand.New(rand.NewPCG(11, 11))
	for _, shape := range []batchShape{{resources: 1, scopes: 1, items: 1}, {resources: 3, scopes: 2, items: 2, varied: true}} {
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(generateTraces(r, shape))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, req []byte) {
		cfg := &Config{GroupBy: []string{"service.name", "tenant"}, MaxGroups: 4}
		wire, wireTT := newTestCounter(t, cfg, pipeline.SignalTraces)
		err := wire.countRequest(otlpwire.SignalTraces, req)
		if err != nil {
			if n := len(readSeries(t, wireTT, itemsMetric)); n != 0 {
				t.Fatalf("countRequest failed (%v) but recorded %d series", err, n)
			}
			return
		}
		// Unmarshal as the OTLP receiver does (it, unlike ProtoUnmarshaler,
		// reads the deprecated instrumentation_library_spans field).
		er := ptraceotlp.NewExportRequest()
		if er.UnmarshalProto(req) != nil {
			return
		}
		td := er.Traces()
		pd, pdTT := newTestCounter(t, cfg, pipeline.SignalTraces)
		if _, err := pd.processTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
		if w, p := sumSeries(readSeries(t, wireTT, itemsMetric)), sumSeries(readSeries(t, pdTT, itemsMetric)); w != p {
			t.Fatalf("bytes path counted %d items, pdata path %d", w, p)
		}
	})
}
