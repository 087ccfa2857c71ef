// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// BenchmarkRunSmallRequest measures run on a small request (one resource,
// two spans) with the SDK's meter provider behind the extension's
// telemetry, so that recording costs what it costs in the Collector: a
// stage that leaves the request alone (as wirecount does) and one that
// diverts all of it (as sdpshard does when it forwards every resource).
func BenchmarkRunSmallRequest(b *testing.B) {
	for _, c := range []struct {
		name    string
		stage   Stage
		diverts bool
	}{
		{"tee", StageFunc(func(context.Context, otlpwire.Request) (Result, error) { return Result{}, nil }), false},
		{"divert", StageFunc(func(context.Context, otlpwire.Request) (Result, error) { return Result{Divert: true}, nil }), true},
	} {
		b.Run(c.name, func(b *testing.B) {
			w, _ := startedWithTelemetry(b)
			_, err := w.register(stageID, otlpwire.SignalTraces, c.stage, c.diverts)
			require.NoError(b, err)
			body := marshal(b, traces(2, "a"))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				cl := w.getCall()
				if res := w.run(ctx, otlpwire.SignalTraces, body, cl); res.err != nil {
					b.Fatal(res.err)
				}
				w.putCall(cl)
			}
		})
	}
}
