// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pipeline"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// fixtureShape is the 10 x 100 x 10 fixture: 10 resources, each with one
// scope of 100 items, each item with 10 attributes.
var fixtureShape = batchShape{resources: 10, scopes: 1, items: 100}

// countingCase runs one batch through one counting path.
type countingCase struct {
	name   string
	signal pipeline.Signal
	bytes  int
	// count returns a function that counts the fixture once on c.
	count func(t testing.TB, c *counter) func() error
}

func countingCases(t testing.TB) []countingCase {
	r := rand.New(rand.NewPCG(10, 100))
	td := generateTraces(r, fixtureShape)
	md := generateMetrics(r, fixtureShape)
	ld := generateLogs(r, fixtureShape)
	tb, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	mb, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	require.NoError(t, err)
	lb, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	require.NoError(t, err)
	ctx := context.Background()
	wire := func(sig otlpwire.Signal, b []byte) func(testing.TB, *counter) func() error {
		return func(_ testing.TB, c *counter) func() error {
			return func() error { return c.countRequest(sig, b) }
		}
	}
	return []countingCase{
		{"pdata/traces", pipeline.SignalTraces, len(tb), func(_ testing.TB, c *counter) func() error {
			return func() error { _, err := c.processTraces(ctx, td); return err }
		}},
		{"bytes/traces", pipeline.SignalTraces, len(tb), wire(otlpwire.SignalTraces, tb)},
		{"pdata/metrics", pipeline.SignalMetrics, len(mb), func(_ testing.TB, c *counter) func() error {
			return func() error { _, err := c.processMetrics(ctx, md); return err }
		}},
		{"bytes/metrics", pipeline.SignalMetrics, len(mb), wire(otlpwire.SignalMetrics, mb)},
		{"pdata/logs", pipeline.SignalLogs, len(lb), func(_ testing.TB, c *counter) func() error {
			return func() error { _, err := c.processLogs(ctx, ld); return err }
		}},
		{"bytes/logs", pipeline.SignalLogs, len(lb), wire(otlpwire.SignalLogs, lb)},
	}
}

// groupings are the configurations measured: the default, and two keys with
// the request guard on (so the guard's item count is part of the cost).
var groupings = []struct {
	name string
	cfg  Config
}{
	{"service", Config{GroupBy: []string{"service.name"}, MaxGroups: 1000}},
	{"tenant_service_guard", Config{GroupBy: []string{"tenant", "service.name"}, MaxGroups: 1000, MaxItemsPerRequest: 1 << 20}},
}

// BenchmarkCountBatch measures the per-batch overhead of metering the
// 10 x 100 x 10 fixture, with groups already known, against the SDK's
// real metric pipeline.
func BenchmarkCountBatch(b *testing.B) {
	for _, g := range groupings {
		for _, tc := range countingCases(b) {
			b.Run(g.name+"/"+tc.name, func(b *testing.B) {
				cfg := g.cfg
				c, _ := newTestCounter(b, &cfg, tc.signal)
				count := tc.count(b, c)
				require.NoError(b, count())
				b.SetBytes(int64(tc.bytes))
				b.ReportAllocs()
				for b.Loop() {
					if err := count(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
