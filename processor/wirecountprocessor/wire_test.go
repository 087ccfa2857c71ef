// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor

import (
	"context"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
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

// The inputs of issue 12: a resource attribute holding a protobuf group
// (which pdata skips and otlpwire refuses by design), a malformed value
// member followed by a valid one and a malformed entity_refs (both refused
// by pdata). The bytes path refuses all three and counts nothing, never a
// group key made of an unreadable value.
func TestBytesPathRefusesIssue12InputsWithoutCounting(t *testing.T) {
	for _, tc := range []struct {
		name        string
		hex         string
		unsupported bool
	}{
		{"value holding a group", "0a120a100a0e0a016b12092a0743440a030a0130", true},
		{"malformed member", "0a0f0a0d0a0b0a016b12062a020a021000", false},
		{"malformed entity_refs", "0a100a0e1a020a050a080a016b12030a0176", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := hex.DecodeString(tc.hex)
			require.NoError(t, err)
			c, tt := newTestCounter(t, &Config{GroupBy: []string{"k"}, MaxGroups: 10}, pipeline.SignalTraces)
			err = c.countRequest(otlpwire.SignalTraces, b)
			require.ErrorIs(t, err, otlpwire.ErrMalformed)
			assert.Equal(t, tc.unsupported, errors.Is(err, otlpwire.ErrUnsupported), "%v", err)
			assert.True(t, consumererror.IsPermanent(err))
			assert.Empty(t, readSeries(t, tt, itemsMetric))
			assert.Empty(t, readSeries(t, tt, bytesMetric))
			perr := ptraceotlp.NewExportRequest().UnmarshalProto(b)
			assert.Equal(t, tc.unsupported, perr == nil, "pdata: %v", perr)
		})
	}
}

// The bytes path counts each resource message as received; the pdata path
// counts what pdata re-encodes. Content pdata drops (here an unknown field
// and a deprecated field-1000 scope superseded by field 2) is counted by the
// bytes path only, byte for byte; items and group keys agree.
func TestBytesPathCountsContentPdataDrops(t *testing.T) {
	cfg := &Config{GroupBy: []string{"service.name"}, MaxGroups: 10}
	td := generateTraces(rand.New(rand.NewPCG(7, 7)), batchShape{resources: 1, scopes: 1, items: 3})
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	var rs []byte
	for d, err := range otlpwire.NewRequest(otlpwire.SignalTraces, b).Resources() {
		require.NoError(t, err)
		rs = d.Bytes()
	}
	unknown := []byte{0x4a, 0x03, 'x', 'y', 'z'} // field 9, LEN 3
	// Field 1000 (tag c2 3e), one ScopeSpans holding one empty span.
	deprecated := []byte{0xc2, 0x3e, 0x02, 0x12, 0x00}
	grown := append(append(append([]byte(nil), rs...), unknown...), deprecated...)
	req := otlpwire.AppendRequest(nil, otlpwire.NewResourceData(otlpwire.SignalTraces, grown))

	wire, wireTT := newTestCounter(t, cfg, pipeline.SignalTraces)
	require.NoError(t, wire.countRequest(otlpwire.SignalTraces, req))
	er := ptraceotlp.NewExportRequest()
	require.NoError(t, er.UnmarshalProto(req))
	pd, pdTT := newTestCounter(t, cfg, pipeline.SignalTraces)
	_, err = pd.processTraces(context.Background(), er.Traces())
	require.NoError(t, err)

	assert.Equal(t, readSeries(t, pdTT, itemsMetric), readSeries(t, wireTT, itemsMetric))
	wb, pb := readSeries(t, wireTT, bytesMetric), readSeries(t, pdTT, bytesMetric)
	require.Len(t, wb, 1)
	for k, v := range pb {
		assert.Equal(t, v+int64(len(unknown)+len(deprecated)), wb[k])
		assert.Equal(t, int64(len(rs)), v)
	}
}

// TestErrTooManyItemsMarksOnlyRequestsOverTheLimit drives both counting
// paths at max_items_per_request and one past it, and with a malformed
// request: only the request over the limit matches ErrTooManyItems, so a
// caller can tell a size refusal from any other permanent error.
func TestErrTooManyItemsMarksOnlyRequestsOverTheLimit(t *testing.T) {
	const limit = 6
	atLimit := tracesFromServices(3, "a", "b")                            // 6 spans
	overLimit := tracesFromServices(1, "a", "b", "c", "d", "e", "f", "g") // 7 spans
	marshal := func(td ptrace.Traces) []byte {
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		require.NoError(t, err)
		return b
	}
	c, tt := newTestCounter(t, &Config{GroupBy: []string{"service.name"}, MaxGroups: 10, MaxItemsPerRequest: limit}, pipeline.SignalTraces)
	paths := map[string]func(td ptrace.Traces) error{
		"pdata": func(td ptrace.Traces) error { _, err := c.processTraces(context.Background(), td); return err },
		"wire":  func(td ptrace.Traces) error { return c.countRequest(otlpwire.SignalTraces, marshal(td)) },
	}
	for name, count := range paths {
		require.NoError(t, count(atLimit), "%s: a request of exactly max_items_per_request items is accepted", name)
		err := count(overLimit)
		require.ErrorIs(t, err, ErrTooManyItems, "%s: one item over the limit", name)
		assert.True(t, consumererror.IsPermanent(err), name)
	}
	// A malformed request within the limit is refused for what it is.
	err := c.countRequest(otlpwire.SignalTraces, marshal(atLimit)[:20])
	require.ErrorIs(t, err, otlpwire.ErrMalformed)
	assert.NotErrorIs(t, err, ErrTooManyItems)

	assert.Equal(t, int64(2*limit), sumSeries(readSeries(t, tt, itemsMetric)), "the two requests at the limit are counted, nothing else")
}
