// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"errors"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/otelcol-sdp/otelcol-sdp/internal/sdkenc"
	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// splitAll splits every resource of b and returns the chunks' concatenation
// and how many chunks there were, checking each chunk on the way.
func splitAll(t *testing.T, sig Signal, b []byte, limit int) ([]byte, int) {
	t.Helper()
	var all []byte
	chunks := 0
	for rd, err := range NewRequest(sig, b).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		for c, err := range SplitResource(rd, limit, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Request) > limit {
				t.Fatalf("chunk of %d bytes over limit %d", len(c.Request), limit)
			}
			got, err := decode(sig, c.Request)
			if err != nil || got.count != c.ItemCount {
				t.Fatalf("chunk: pdata count %d (%v), ItemCount %d", got.count, err, c.ItemCount)
			}
			all = append(all, c.Request...)
			chunks++
		}
	}
	return all, chunks
}

func TestSplitCutsScopesAndItems(t *testing.T) {
	for _, sig := range signals {
		bt := genBatch(sig, 7, shape{resources: 2, scopes: 3, items: 20, attrs: 3})
		want, _ := decode(sig, bt.b)
		for _, b := range [][]byte{bt.b, bt.hand(sdkenc.Options{Deprecated: true})} {
			all, chunks := splitAll(t, sig, b, 1200)
			if chunks <= 6 {
				t.Fatalf("%v: only %d chunks: nothing was cut inside a scope", sig, chunks)
			}
			got, err := decode(sig, all)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.flat, want.flat) {
				t.Fatalf("%v: reassembled data differs", sig)
			}
		}
	}
}

func TestSplitCutsMetricBetweenDataPoints(t *testing.T) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "big")
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("s")
	m := sm.Metrics().AppendEmpty()
	m.SetName("huge.sum")
	sum := m.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	for i := range 500 {
		dp := sum.DataPoints().AppendEmpty()
		dp.SetIntValue(int64(i))
		dp.Attributes().PutInt("i", int64(i))
	}
	b, _ := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	want, _ := decode(SignalMetrics, b)
	all, chunks := splitAll(t, SignalMetrics, b, 1000)
	if chunks < 10 {
		t.Fatalf("%d chunks for %d bytes", chunks, len(b))
	}
	got, err := decode(SignalMetrics, all)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.flat, want.flat) {
		t.Fatal("reassembled data differs")
	}
}

func TestSplitItemTooLarge(t *testing.T) {
	for _, sig := range signals {
		bt := genBatch(sig, 1, shape{resources: 1, scopes: 1, items: 3, attrs: 10})
		var rd ResourceData
		for r := range NewRequest(sig, bt.b).Resources() {
			rd = r
		}
		var err error
		for _, e := range SplitResource(rd, 200, nil) {
			err = e
		}
		if !errors.Is(err, ErrItemTooLarge) {
			t.Fatalf("%v: err = %v, want ErrItemTooLarge", sig, err)
		}
	}
}

func TestSplitWholeResourceIsVerbatim(t *testing.T) {
	bt := genBatch(SignalLogs, 3, shape{resources: 1, scopes: 2, items: 2, attrs: 2})
	for rd := range NewRequest(SignalLogs, bt.b).Resources() {
		n := 0
		for c, err := range SplitResource(rd, len(bt.b), nil) {
			if err != nil || !slices.Equal(c.Request, bt.b) {
				t.Fatalf("err %v; chunk differs from the request", err)
			}
			n++
		}
		if n != 1 {
			t.Fatalf("%d chunks", n)
		}
	}
}

func TestAppendRequestConcatenates(t *testing.T) {
	bt := genBatch(SignalTraces, 2, shape{resources: 3, scopes: 1, items: 2, attrs: 2})
	var out []byte
	for rd, err := range NewRequest(SignalTraces, bt.b).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		before := len(out)
		out = AppendRequest(out, rd)
		if len(out)-before != RequestSize(rd) {
			t.Fatalf("RequestSize %d, appended %d", RequestSize(rd), len(out)-before)
		}
	}
	if !slices.Equal(out, bt.b) {
		t.Fatal("re-appending every resource does not rebuild the request")
	}
}

func TestSplitEmptyScopeTooLargeIsAnError(t *testing.T) {
	// Two scopes without items, each with a long name: the pair does not fit
	// 300 bytes, nor does one alone; nothing may vanish silently.
	name := make([]byte, 300)
	var p pb
	for range 2 {
		p.msg(2, func(q *pb) { q.msg(1, func(r *pb) { r.bytes(1, name) }) })
	}
	rd := NewResourceData(SignalLogs, p.b)
	var err error
	for _, e := range SplitResource(rd, 300, nil) {
		err = e
	}
	if !errors.Is(err, ErrItemTooLarge) {
		t.Fatalf("err = %v, want ErrItemTooLarge", err)
	}
}
