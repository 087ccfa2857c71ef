// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor

import (
	"bytes"
	"context"
	"errors"
	"maps"
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

// FuzzCountRequest feeds arbitrary bytes to the request bytes path and
// holds it to its documented semantics:
//   - it never panics, and when it returns an error it has counted nothing;
//   - a request the OTLP receiver's pdata unmarshal accepts is refused only
//     for a documented divergence (otlpwire.ErrUnsupported: groups, values
//     nested over 100 deep);
//   - when both accept, the two paths count the same items under the same
//     group keys, and, when the request is exactly what pdata re-encodes, the
//     same bytes under the same keys too.
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
		// Unmarshal as the OTLP receiver does (it, unlike ProtoUnmarshaler,
		// reads the deprecated instrumentation_library_spans field).
		er := ptraceotlp.NewExportRequest()
		perr := er.UnmarshalProto(req)
		if err != nil {
			if n := len(readSeries(t, wireTT, itemsMetric)) + len(readSeries(t, wireTT, bytesMetric)); n != 0 {
				t.Fatalf("countRequest failed (%v) but recorded %d series", err, n)
			}
			if !errors.Is(err, otlpwire.ErrMalformed) {
				t.Fatalf("error does not match ErrMalformed: %v", err)
			}
			if perr == nil && !errors.Is(err, otlpwire.ErrUnsupported) {
				t.Fatalf("pdata accepts the request, bytes path: %v", err)
			}
			return
		}
		if perr != nil {
			// The receiver refuses it: the pdata path never sees it.
			return
		}
		td := er.Traces()
		pd, pdTT := newTestCounter(t, cfg, pipeline.SignalTraces)
		if _, err := pd.processTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
		if w, p := readSeries(t, wireTT, itemsMetric), readSeries(t, pdTT, itemsMetric); !maps.Equal(w, p) {
			t.Fatalf("items per group: bytes path %v, pdata path %v", w, p)
		}
		canonical, err := er.MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(canonical, req) {
			if w, p := readSeries(t, wireTT, bytesMetric), readSeries(t, pdTT, bytesMetric); !maps.Equal(w, p) {
				t.Fatalf("bytes per group of a pdata-encoded request: bytes path %v, pdata path %v", w, p)
			}
		}
	})
}
