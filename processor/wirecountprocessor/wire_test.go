package wirecountprocessor

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pipeline"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// newTestCounter builds a counter reporting to its own telemetry.
func newTestCounter(t testing.TB, cfg *Config, signal pipeline.Signal) (*counter, *componenttest.Telemetry) {
	t.Helper()
	tt := newTelemetry(t)
	c, err := newCounter(newSettings(tt, "same"), cfg, signal)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.shutdown(context.Background())) })
	return c, tt
}

// pathPair drives the pdata path and the request bytes path with the same
// batches and keeps each path's telemetry apart.
type pathPair struct {
	pdata, wire     *counter
	pdataTT, wireTT *componenttest.Telemetry
}

func newPathPair(t *testing.T, cfg *Config, signal pipeline.Signal) pathPair {
	var p pathPair
	p.pdata, p.pdataTT = newTestCounter(t, cfg, signal)
	p.wire, p.wireTT = newTestCounter(t, cfg, signal)
	return p
}

func (p pathPair) assertSame(t *testing.T) {
	t.Helper()
	for _, name := range []string{itemsMetric, bytesMetric, overflowGroupsMetric, refusedRequestsMetric, refusedItemsMetric} {
		assert.Equal(t, readSeries(t, p.pdataTT, name), readSeries(t, p.wireTT, name), name)
	}
}

func TestBytesPathMatchesPdataPath(t *testing.T) {
	shape := batchShape{resources: 8, scopes: 3, items: 12, varied: true}
	for name, groupBy := range groupBys {
		t.Run(name, func(t *testing.T) {
			// A small max_groups so that both paths also fold the same groups.
			cfg := &Config{GroupBy: groupBy, MaxGroups: 5, MaxItemsPerRequest: 60}
			r := rand.New(rand.NewPCG(3, uint64(len(name))))
			ctx := context.Background()

			traces := newPathPair(t, cfg, pipeline.SignalTraces)
			metrics := newPathPair(t, cfg, pipeline.SignalMetrics)
			logs := newPathPair(t, cfg, pipeline.SignalLogs)
			var wantTruth = newTruth()
			for range 20 {
				td := generateTraces(r, shape)
				b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
				require.NoError(t, err)
				_, pdataErr := traces.pdata.processTraces(ctx, td)
				assert.Equal(t, pdataErr, traces.wire.countRequest(otlpwire.SignalTraces, b))

				md := generateMetrics(r, shape)
				b, err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
				require.NoError(t, err)
				_, pdataErr = metrics.pdata.processMetrics(ctx, md)
				assert.Equal(t, pdataErr, metrics.wire.countRequest(otlpwire.SignalMetrics, b))

				ld := generateLogs(r, shape)
				b, err = (&plog.ProtoMarshaler{}).MarshalLogs(ld)
				require.NoError(t, err)
				_, pdataErr = logs.pdata.processLogs(ctx, ld)
				assert.Equal(t, pdataErr, logs.wire.countRequest(otlpwire.SignalLogs, b))
				if pdataErr == nil {
					wantTruth.addLogs(t, newSettings(logs.pdataTT, "same").ID, groupBy, ld)
				}
			}
			require.NotEmpty(t, readSeries(t, traces.wireTT, itemsMetric))
			refused := len(readSeries(t, traces.wireTT, refusedRequestsMetric)) + len(readSeries(t, metrics.wireTT, refusedRequestsMetric)) + len(readSeries(t, logs.wireTT, refusedRequestsMetric))
			require.Positive(t, refused, "the guard never fired; enlarge the batches")
			traces.assertSame(t)
			metrics.assertSame(t)
			logs.assertSame(t)
			if name == "none" || name == "absent" {
				// Few enough groups not to fold: both equal the truth too.
				assert.Equal(t, wantTruth.items, readSeries(t, logs.wireTT, itemsMetric))
				assert.Equal(t, wantTruth.bytes, readSeries(t, logs.wireTT, bytesMetric))
			}
		})
	}
}

func TestBytesPathRefusesMalformedRequestsWithoutCounting(t *testing.T) {
	c, tt := newTestCounter(t, &Config{GroupBy: []string{"service.name"}, MaxGroups: 10}, pipeline.SignalTraces)
	td := generateTraces(rand.New(rand.NewPCG(5, 5)), batchShape{resources: 3, scopes: 2, items: 4})
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)

	// Cut inside the last resource: the first resources parse, but nothing
	// may be counted.
	err = c.countRequest(otlpwire.SignalTraces, b[:len(b)-3])
	require.Error(t, err)
	assert.ErrorIs(t, err, otlpwire.ErrMalformed)
	assert.True(t, consumererror.IsPermanent(err))
	assert.Empty(t, readSeries(t, tt, itemsMetric))
	assert.Empty(t, readSeries(t, tt, bytesMetric))

	err = c.countRequest(otlpwire.SignalLogs, b)
	require.ErrorIs(t, err, errSignalMismatch)
	assert.Empty(t, readSeries(t, tt, itemsMetric))

	require.NoError(t, c.countRequest(otlpwire.SignalTraces, b))
	assert.NotEmpty(t, readSeries(t, tt, itemsMetric))
}

func TestBytesPathGuard(t *testing.T) {
	c, tt := newTestCounter(t, &Config{GroupBy: []string{"service.name"}, MaxGroups: 10, MaxItemsPerRequest: 23}, pipeline.SignalLogs)
	ld := generateLogs(rand.New(rand.NewPCG(6, 6)), batchShape{resources: 3, scopes: 2, items: 4})
	b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	require.NoError(t, err)

	err = c.countRequest(otlpwire.SignalLogs, b)
	require.ErrorIs(t, err, ErrTooManyItems)
	assert.True(t, consumererror.IsPermanent(err))
	assert.Empty(t, readSeries(t, tt, itemsMetric))
	want := series{}
	want.add(baseSet(newSettings(tt, "same").ID, "logs"), 24)
	assert.Equal(t, want, readSeries(t, tt, refusedItemsMetric))
}
