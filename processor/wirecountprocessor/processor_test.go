// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/otelcol-sdp/otelcol-sdp/processor/wirecountprocessor/internal/metadata"
)

const (
	itemsMetric           = "otelcol_processor_wirecount_items"
	bytesMetric           = "otelcol_processor_wirecount_bytes"
	overflowGroupsMetric  = "otelcol_processor_wirecount_overflow_groups"
	refusedRequestsMetric = "otelcol_processor_wirecount_refused_requests"
	refusedItemsMetric    = "otelcol_processor_wirecount_refused_items"
)

// series is a metric's value per attribute set, keyed by the set's
// canonical encoding.
type series map[string]int64

func (s series) add(set attribute.Set, v int64) { s[set.Encoded(attribute.DefaultEncoder())] += v }

// readSeries returns the current value of every series of a metric; a metric
// never recorded reads as no series.
func readSeries(t *testing.T, tt *componenttest.Telemetry, name string) series {
	t.Helper()
	got := series{}
	m, err := tt.GetMetric(name)
	if err != nil {
		return got
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is %T, want a Sum[int64]", name, m.Data)
	require.True(t, sum.IsMonotonic)
	for _, dp := range sum.DataPoints {
		got.add(dp.Attributes, dp.Value)
	}
	return got
}

// groupSet is the attribute set the processor must use for a resource when
// the Collector does not inject its identity (as in these tests): the
// component ID and signal attributes plus each group_by key rendered by pdata.
func groupSet(id component.ID, signal string, groupBy []string, res pcommon.Resource) attribute.Set {
	kvs := []attribute.KeyValue{attribute.String("otelcol.component.id", id.String()), attribute.String("otelcol.signal", signal)}
	for _, k := range groupBy {
		value := MissingValue
		if v, ok := res.Attributes().Get(k); ok {
			value = v.AsString()
		}
		kvs = append(kvs, attribute.String(k, value))
	}
	return attribute.NewSet(kvs...)
}

func baseSet(id component.ID, signal string) attribute.Set {
	return attribute.NewSet(attribute.String("otelcol.component.id", id.String()), attribute.String("otelcol.signal", signal))
}

// messageSize recovers the size of the one resource message inside a
// marshalled single-resource request, independently of the size functions
// the processor uses.
func messageSize(t *testing.T, request []byte) int64 {
	t.Helper()
	num, typ, n := protowire.ConsumeTag(request)
	require.Positive(t, n)
	require.Equal(t, protowire.Number(1), num)
	require.Equal(t, protowire.BytesType, typ)
	msg, m := protowire.ConsumeBytes(request[n:])
	require.Positive(t, m)
	require.Equal(t, len(request), n+m, "request holds more than one resource")
	return int64(len(msg))
}

// truth accumulates the expected items and bytes series.
type truth struct{ items, bytes series }

func newTruth() truth { return truth{items: series{}, bytes: series{}} }

func (tr truth) addTraces(t *testing.T, id component.ID, groupBy []string, td ptrace.Traces) {
	for _, rs := range td.ResourceSpans().All() {
		one := ptrace.NewTraces()
		rs.CopyTo(one.ResourceSpans().AppendEmpty())
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(one)
		require.NoError(t, err)
		set := groupSet(id, "traces", groupBy, rs.Resource())
		tr.items.add(set, int64(one.SpanCount()))
		tr.bytes.add(set, messageSize(t, b))
	}
}

func (tr truth) addMetrics(t *testing.T, id component.ID, groupBy []string, md pmetric.Metrics) {
	for _, rm := range md.ResourceMetrics().All() {
		one := pmetric.NewMetrics()
		rm.CopyTo(one.ResourceMetrics().AppendEmpty())
		b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(one)
		require.NoError(t, err)
		set := groupSet(id, "metrics", groupBy, rm.Resource())
		tr.items.add(set, int64(one.DataPointCount()))
		tr.bytes.add(set, messageSize(t, b))
	}
}

func (tr truth) addLogs(t *testing.T, id component.ID, groupBy []string, ld plog.Logs) {
	for _, rl := range ld.ResourceLogs().All() {
		one := plog.NewLogs()
		rl.CopyTo(one.ResourceLogs().AppendEmpty())
		b, err := (&plog.ProtoMarshaler{}).MarshalLogs(one)
		require.NoError(t, err)
		set := groupSet(id, "logs", groupBy, rl.Resource())
		tr.items.add(set, int64(one.LogRecordCount()))
		tr.bytes.add(set, messageSize(t, b))
	}
}

func newSettings(tt *componenttest.Telemetry, name string) processor.Settings {
	set := processortest.NewNopSettings(metadata.Type)
	set.ID = component.NewIDWithName(metadata.Type, name)
	set.TelemetrySettings = tt.NewTelemetrySettings()
	return set
}

func newTelemetry(t testing.TB) *componenttest.Telemetry {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	return tt
}

// startProcessor creates and starts a processor and shuts it down at the end
// of the test.
func startProcessor[P component.Component](t *testing.T, create func() (P, error)) P {
	t.Helper()
	p, err := create()
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	return p
}

var groupBys = map[string][]string{
	"service":        {"service.name"},
	"tenant_service": {"tenant", "service.name"},
	"typed":          {"canary", "tenant", "blob", "padding"},
	"absent":         {"not.there"},
	"none":           {},
}

func TestPdataCountsMatchTruth(t *testing.T) {
	shape := batchShape{resources: 8, scopes: 3, items: 12, varied: true}
	for name, groupBy := range groupBys {
		t.Run(name, func(t *testing.T) {
			tt := newTelemetry(t)
			set := newSettings(tt, name)
			cfg := &Config{GroupBy: groupBy, MaxGroups: 1000}
			r := rand.New(rand.NewPCG(1, uint64(len(name))))
			want := newTruth()

			factory := NewFactory()
			tracesSink, metricsSink, logsSink := new(consumertest.TracesSink), new(consumertest.MetricsSink), new(consumertest.LogsSink)
			tp := startProcessor(t, func() (processor.Traces, error) {
				return factory.CreateTraces(context.Background(), set, cfg, tracesSink)
			})
			mp := startProcessor(t, func() (processor.Metrics, error) {
				return factory.CreateMetrics(context.Background(), set, cfg, metricsSink)
			})
			lp := startProcessor(t, func() (processor.Logs, error) {
				return factory.CreateLogs(context.Background(), set, cfg, logsSink)
			})
			for range 20 {
				td := generateTraces(r, shape)
				want.addTraces(t, set.ID, groupBy, td)
				require.NoError(t, tp.ConsumeTraces(context.Background(), td))
				md := generateMetrics(r, shape)
				want.addMetrics(t, set.ID, groupBy, md)
				require.NoError(t, mp.ConsumeMetrics(context.Background(), md))
				ld := generateLogs(r, shape)
				want.addLogs(t, set.ID, groupBy, ld)
				require.NoError(t, lp.ConsumeLogs(context.Background(), ld))
			}
			assert.Len(t, tracesSink.AllTraces(), 20)
			assert.Len(t, metricsSink.AllMetrics(), 20)
			assert.Len(t, logsSink.AllLogs(), 20)
			require.NotEmpty(t, want.items)
			assert.Equal(t, want.items, readSeries(t, tt, itemsMetric))
			assert.Equal(t, want.bytes, readSeries(t, tt, bytesMetric))
			assert.Empty(t, readSeries(t, tt, overflowGroupsMetric))
		})
	}
}

func TestProcessorIsReadOnly(t *testing.T) {
	factory := NewFactory()
	set := processortest.NewNopSettings(metadata.Type)
	p, err := factory.CreateTraces(context.Background(), set, factory.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	assert.Equal(t, consumer.Capabilities{MutatesData: false}, p.Capabilities())
	require.NoError(t, p.Shutdown(context.Background()))
}

// tracesFromServices builds a batch with one resource per service name, each
// holding spans spans.
func tracesFromServices(spans int, services ...string) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, svc := range services {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		ss := rs.ScopeSpans().AppendEmpty()
		for range spans {
			ss.Spans().AppendEmpty().SetName("op")
		}
	}
	return td
}

func TestCardinalityCapFoldsIntoOverflowGroup(t *testing.T) {
	tt := newTelemetry(t)
	set := newSettings(tt, "capped")
	cfg := &Config{GroupBy: []string{"service.name"}, MaxGroups: 2}
	p := startProcessor(t, func() (processor.Traces, error) {
		return NewFactory().CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	})

	spansOf := func(svc string) attribute.Set {
		return attribute.NewSet(attribute.String("otelcol.component.id", "wirecount/capped"), attribute.String("otelcol.signal", "traces"), attribute.String("service.name", svc))
	}
	want := series{}
	// a and b take the two slots; c, d and e (and a second c) fold.
	require.NoError(t, p.ConsumeTraces(context.Background(), tracesFromServices(3, "a", "b", "c", "d", "c", "e")))
	want.add(spansOf("a"), 3)
	want.add(spansOf("b"), 3)
	want.add(spansOf(OverflowValue), 12)
	assert.Equal(t, want, readSeries(t, tt, itemsMetric))
	overflow := series{}
	overflow.add(baseSet(set.ID, "traces"), 3)
	assert.Equal(t, overflow, readSeries(t, tt, overflowGroupsMetric))

	// Known groups keep counting; folded groups seen again are not new.
	require.NoError(t, p.ConsumeTraces(context.Background(), tracesFromServices(1, "e", "a", "d")))
	want.add(spansOf("a"), 1)
	want.add(spansOf(OverflowValue), 2)
	assert.Equal(t, want, readSeries(t, tt, itemsMetric))
	assert.Equal(t, overflow, readSeries(t, tt, overflowGroupsMetric))

	require.NoError(t, p.ConsumeTraces(context.Background(), tracesFromServices(1, "f")))
	want.add(spansOf(OverflowValue), 1)
	overflow.add(baseSet(set.ID, "traces"), 1)
	assert.Equal(t, want, readSeries(t, tt, itemsMetric))
	assert.Equal(t, overflow, readSeries(t, tt, overflowGroupsMetric))
}

func TestMaxItemsPerRequestRefusesLargeRequests(t *testing.T) {
	tt := newTelemetry(t)
	set := newSettings(tt, "guard")
	cfg := &Config{GroupBy: []string{"service.name"}, MaxGroups: 10, MaxItemsPerRequest: 10}
	factory := NewFactory()
	tracesSink, metricsSink, logsSink := new(consumertest.TracesSink), new(consumertest.MetricsSink), new(consumertest.LogsSink)
	tp := startProcessor(t, func() (processor.Traces, error) {
		return factory.CreateTraces(context.Background(), set, cfg, tracesSink)
	})
	mp := startProcessor(t, func() (processor.Metrics, error) {
		return factory.CreateMetrics(context.Background(), set, cfg, metricsSink)
	})
	lp := startProcessor(t, func() (processor.Logs, error) {
		return factory.CreateLogs(context.Background(), set, cfg, logsSink)
	})

	r := rand.New(rand.NewPCG(7, 7))
	big := batchShape{resources: 2, scopes: 2, items: 3} // 12 items each
	small := batchShape{resources: 2, scopes: 1, items: 5}

	refused := []error{
		tp.ConsumeTraces(context.Background(), generateTraces(r, big)),
		mp.ConsumeMetrics(context.Background(), generateMetrics(r, big)),
		lp.ConsumeLogs(context.Background(), generateLogs(r, big)),
	}
	for _, err := range refused {
		require.Error(t, err)
		assert.True(t, consumererror.IsPermanent(err), "want a permanent error, got %v", err)
		assert.ErrorIs(t, err, ErrTooManyItems)
		assert.Contains(t, err.Error(), "12")
	}
	assert.Empty(t, tracesSink.AllTraces())
	assert.Empty(t, metricsSink.AllMetrics())
	assert.Empty(t, logsSink.AllLogs())
	assert.Empty(t, readSeries(t, tt, itemsMetric), "items of refused requests must not be metered")

	want := newTruth()
	td, md, ld := generateTraces(r, small), generateMetrics(r, small), generateLogs(r, small)
	want.addTraces(t, set.ID, cfg.GroupBy, td)
	want.addMetrics(t, set.ID, cfg.GroupBy, md)
	want.addLogs(t, set.ID, cfg.GroupBy, ld)
	require.NoError(t, tp.ConsumeTraces(context.Background(), td))
	require.NoError(t, mp.ConsumeMetrics(context.Background(), md))
	require.NoError(t, lp.ConsumeLogs(context.Background(), ld))
	assert.Len(t, tracesSink.AllTraces(), 1)
	assert.Len(t, metricsSink.AllMetrics(), 1)
	assert.Len(t, logsSink.AllLogs(), 1)
	assert.Equal(t, want.items, readSeries(t, tt, itemsMetric))

	wantRequests, wantItems := series{}, series{}
	for _, signal := range []string{"traces", "metrics", "logs"} {
		wantRequests.add(baseSet(set.ID, signal), 1)
		wantItems.add(baseSet(set.ID, signal), 12)
	}
	assert.Equal(t, wantRequests, readSeries(t, tt, refusedRequestsMetric))
	assert.Equal(t, wantItems, readSeries(t, tt, refusedItemsMetric))
}

func TestConcurrentBatchesAreAllCounted(t *testing.T) {
	tt := newTelemetry(t)
	set := newSettings(tt, "concurrent")
	cfg := &Config{GroupBy: []string{"service.name"}, MaxGroups: 3}
	p := startProcessor(t, func() (processor.Logs, error) {
		return NewFactory().CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	})
	const workers, batches = 4, 25
	want := make([]int64, workers)
	done := make(chan error, workers)
	for w := range workers {
		r := rand.New(rand.NewPCG(uint64(w), 99))
		lds := make([]plog.Logs, batches)
		for i := range lds {
			lds[i] = generateLogs(r, batchShape{resources: 4, scopes: 2, items: 5, varied: true})
			want[w] += int64(lds[i].LogRecordCount())
		}
		go consumeAll(p, lds, done)
	}
	for range workers {
		require.NoError(t, <-done)
	}
	var total int64
	for _, n := range want {
		total += n
	}
	got := readSeries(t, tt, itemsMetric)
	assert.Len(t, got, 4, "three admitted groups and the overflow group")
	assert.Equal(t, total, sumSeries(got))
}

// TestCollectingWhileCountingSeesGrowingTotals reads the metrics while
// batches are being counted, as a Prometheus scrape does: under -race this
// checks that the totals are read safely, and every read must be a total
// that does not go backwards.
func TestCollectingWhileCountingSeesGrowingTotals(t *testing.T) {
	tt := newTelemetry(t)
	set := newSettings(tt, "scraped")
	cfg := &Config{GroupBy: []string{"service.name"}, MaxGroups: 2}
	p := startProcessor(t, func() (processor.Logs, error) {
		return NewFactory().CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	})
	r := rand.New(rand.NewPCG(7, 7))
	lds := make([]plog.Logs, 50)
	var want int64
	for i := range lds {
		lds[i] = generateLogs(r, batchShape{resources: 3, scopes: 1, items: 4, varied: true})
		want += int64(lds[i].LogRecordCount())
	}
	done := make(chan error, 1)
	go consumeAll(p, lds, done)
	var last int64
	for counting := true; counting; {
		select {
		case err := <-done:
			require.NoError(t, err)
			counting = false
		default:
		}
		got := sumSeries(readSeries(t, tt, itemsMetric))
		assert.GreaterOrEqual(t, got, last, "a cumulative total went backwards")
		last = got
	}
	assert.Equal(t, want, sumSeries(readSeries(t, tt, itemsMetric)))
}

// TestOneIDInTwoPipelinesAddsUp runs one wirecount ID in two traces
// pipelines: each counts what its pipeline carries, and the series of a
// group is the sum of both, as one counter shared by both pipelines would
// report it.
func TestOneIDInTwoPipelinesAddsUp(t *testing.T) {
	tt := newTelemetry(t)
	cfg := &Config{GroupBy: []string{"service.name"}, MaxGroups: 10}
	create := func() (processor.Traces, error) {
		return NewFactory().CreateTraces(context.Background(), newSettings(tt, "shared"), cfg, consumertest.NewNop())
	}
	a, b := startProcessor(t, create), startProcessor(t, create)
	spans := func(n int) ptrace.Traces {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "checkout")
		ss := rs.ScopeSpans().AppendEmpty().Spans()
		for range n {
			ss.AppendEmpty().SetName("s")
		}
		return td
	}
	require.NoError(t, a.ConsumeTraces(context.Background(), spans(3)))
	require.NoError(t, b.ConsumeTraces(context.Background(), spans(4)))
	require.NoError(t, a.ConsumeTraces(context.Background(), spans(5)))
	got := readSeries(t, tt, itemsMetric)
	assert.Len(t, got, 1)
	assert.Equal(t, int64(12), sumSeries(got))
}

// TestCountsOutliveShutdown: the Collector's telemetry shuts down after its
// components, and the last export of a push exporter must still carry the
// final counts, as it did when the counters were synchronous.
func TestCountsOutliveShutdown(t *testing.T) {
	tt := newTelemetry(t)
	cfg := &Config{GroupBy: []string{"service.name"}, MaxGroups: 10}
	p, err := NewFactory().CreateLogs(context.Background(), newSettings(tt, "stopping"), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	ld := generateLogs(rand.New(rand.NewPCG(3, 3)), batchShape{resources: 3, scopes: 1, items: 4, varied: true})
	require.NoError(t, p.ConsumeLogs(context.Background(), ld))
	before := readSeries(t, tt, itemsMetric)
	require.Equal(t, int64(ld.LogRecordCount()), sumSeries(before))
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Equal(t, before, readSeries(t, tt, itemsMetric))
}

// consumeAll has p consume lds in order and sends to done the first error,
// or nil once all were consumed.
func consumeAll(p processor.Logs, lds []plog.Logs, done chan<- error) {
	for _, ld := range lds {
		if err := p.ConsumeLogs(context.Background(), ld); err != nil {
			done <- err
			return
		}
	}
	done <- nil
}
