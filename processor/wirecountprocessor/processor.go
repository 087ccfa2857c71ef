// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor // import "github.com/otelcol-sdp/otelcol-sdp/processor/wirecountprocessor"

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"sync"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"
	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry"
	"github.com/otelcol-sdp/otelcol-sdp/processor/wirecountprocessor/internal/metadata"
)

// ErrTooManyItems is wrapped (inside a permanent consumer error) by the error
// returned for a request holding more than max_items_per_request items.
var ErrTooManyItems = errors.New("wirecount: request exceeds max_items_per_request")

// maxTrackedFolded bounds the memory spent remembering which groups were
// folded into the overflow group (8-byte hashes, a few MiB at most). Past it,
// processor_wirecount_overflow_groups stops growing and a warning is logged.
const maxTrackedFolded = 1 << 17

// maxTalliesPerBatch bounds the linear search over the groups touched by one
// batch; a batch touching more groups records in several rounds.
const maxTalliesPerBatch = 64

// group is one combination of group_by values: its metric attributes, built
// once, and its running totals. Counting adds to the totals with atomics and
// the telemetry callbacks read them when the Collector collects its metrics,
// so that counting a batch costs a few atomic adds instead of a pass through
// the metrics SDK per group.
type group struct {
	attrs        metric.MeasurementOption
	items, bytes componenttelemetry.Count
}

// tally accumulates one batch's counts for one group.
type tally struct {
	g            *group
	items, bytes int64
}

// scratch is the per-call working memory, pooled so that concurrent batches
// do not share it and steady state allocates nothing.
type scratch struct {
	key     []byte
	tallies []tally

	// Used by the request bytes path: the group keys of a request's
	// resources, back to back, and what each resource holds.
	keys      []byte
	resources []wireResource
}

// counter meters one processor instance (one signal). Both
// counting paths, pdata and request bytes, feed it.
type counter struct {
	signal    pipeline.Signal
	groupBy   []string
	maxGroups int
	maxItems  int
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	// base holds the identity attributes every series carries (none when
	// the Collector injects them); baseOpts records with only those, for the
	// metrics that are not per group.
	base     []attribute.KeyValue
	baseOpts []metric.AddOption
	overflow *group
	seed     maphash.Seed
	scratch  sync.Pool
	stage    stageHook

	mu            sync.RWMutex
	groups        map[string]*group
	folded        map[uint64]struct{}
	warnedFolding bool
}

func newCounter(set processor.Settings, cfg *Config, signal pipeline.Signal) (*counter, error) {
	// A counter serves one signal but not always one pipeline: the stage
	// that counts a request before the receiver decodes it runs once for
	// every pipeline the receiver feeds (the first counter of the ID to
	// register it counts). So its telemetry names the signal, not the
	// pipeline.
	ts := componenttelemetry.Drop(set.TelemetrySettings, componenttelemetry.PipelineIDKey)
	tb, err := metadata.NewTelemetryBuilder(ts)
	if err != nil {
		return nil, fmt.Errorf("wirecount: creating telemetry: %w", err)
	}
	c := &counter{
		signal:    signal,
		groupBy:   append([]string(nil), cfg.GroupBy...),
		maxGroups: cfg.MaxGroups,
		maxItems:  cfg.MaxItemsPerRequest,
		logger:    ts.Logger,
		telemetry: tb,
		seed:      maphash.MakeSeed(),
		groups:    make(map[string]*group),
		folded:    make(map[uint64]struct{}),
		stage:     stageHook{id: set.ID},
	}
	c.scratch.New = func() any { return &scratch{} }
	// The Collector injects the component's ID and signal; Identity
	// records them only when it does not.
	c.base = componenttelemetry.Identity(ts, set.ID, signal.String())
	c.baseOpts = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(c.base...))}
	values := make([]string, len(c.groupBy))
	for i := range values {
		values[i] = OverflowValue
	}
	c.overflow = c.newGroup(values)
	if err := c.registerCallbacks(); err != nil {
		tb.Shutdown()
		return nil, fmt.Errorf("wirecount: registering telemetry callbacks: %w", err)
	}
	return c, nil
}

// newGroup builds the metric attributes of the group with the given values,
// in group_by order.
func (c *counter) newGroup(values []string) *group {
	kvs := make([]attribute.KeyValue, 0, len(c.base)+len(values))
	kvs = append(kvs, c.base...)
	for i, v := range values {
		kvs = append(kvs, attribute.String(c.groupBy[i], v))
	}
	return &group{attrs: metric.WithAttributeSet(attribute.NewSet(kvs...))}
}

// registerCallbacks has the telemetry read the groups' totals when it
// collects. An observation carries no exemplar, which the synchronous
// counters did not record either (counting uses a background context).
func (c *counter) registerCallbacks() error {
	return errors.Join(
		c.telemetry.RegisterProcessorWirecountItemsCallback(func(_ context.Context, o metric.Int64Observer) error {
			c.observe(o, func(g *group) *componenttelemetry.Count { return &g.items })
			return nil
		}),
		c.telemetry.RegisterProcessorWirecountBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
			c.observe(o, func(g *group) *componenttelemetry.Count { return &g.bytes })
			return nil
		}),
	)
}

// observe reports one of the counts of every group counted so far.
func (c *counter) observe(o metric.Int64Observer, count func(*group) *componenttelemetry.Count) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, g := range c.groups {
		count(g).Observe(o, g.attrs)
	}
	count(c.overflow).Observe(o, c.overflow.attrs)
}

// shutdown leaves the counts reported: the Collector's telemetry shuts
// down after its components, and the last export of a push exporter must
// still carry the final counts, as it did with synchronous counters. The
// callbacks end with the meter provider, which the Collector builds anew
// with every configuration it runs.
func (c *counter) shutdown(context.Context) error {
	c.shutdownStage()
	return nil
}

// Group keys concatenate, for each group_by key in order, the rendered value
// followed by its length as 4 little-endian bytes. The encoding is
// unambiguous read from the end, so two different value lists never share a
// key, and it is built in a reused buffer.

// endKeyValue closes the value rendered at dst[start:] with its length.
func endKeyValue(dst []byte, start int) []byte {
	return binary.LittleEndian.AppendUint32(dst, uint32(len(dst)-start))
}

// splitGroupKey decodes a group key into its n values, in group_by order.
func splitGroupKey(key []byte, n int) []string {
	values := make([]string, n)
	end := len(key)
	for i := n - 1; i >= 0; i-- {
		size := int(binary.LittleEndian.Uint32(key[end-4 : end]))
		values[i] = string(key[end-4-size : end-4])
		end -= 4 + size
	}
	return values
}

// lookup returns the group of key, admitting it if there is room and
// otherwise folding it into the overflow group. Known groups and already
// folded groups only take the read lock.
func (c *counter) lookup(key []byte) *group {
	c.mu.RLock()
	g := c.groups[string(key)]
	if g == nil && len(c.groups) >= c.maxGroups {
		if _, folded := c.folded[maphash.Bytes(c.seed, key)]; folded {
			g = c.overflow
		}
	}
	c.mu.RUnlock()
	if g != nil {
		return g
	}
	return c.admit(key)
}

func (c *counter) admit(key []byte) *group {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.groups[string(key)]; g != nil {
		return g
	}
	if len(c.groups) < c.maxGroups {
		g := c.newGroup(splitGroupKey(key, len(c.groupBy)))
		c.groups[string(key)] = g
		return g
	}
	h := maphash.Bytes(c.seed, key)
	if _, folded := c.folded[h]; folded {
		return c.overflow
	}
	if len(c.folded) < maxTrackedFolded {
		c.folded[h] = struct{}{}
		c.telemetry.ProcessorWirecountOverflowGroups.Add(context.Background(), 1, c.baseOpts...)
	} else if !c.warnedFolding {
		c.warnedFolding = true
		c.logger.Warn("wirecount: too many distinct overflow groups to track; processor_wirecount_overflow_groups stops growing, overflow data is still counted",
			zap.Int("max_groups", c.maxGroups), zap.Int("tracked_overflow_groups", maxTrackedFolded))
	}
	return c.overflow
}

// tally adds one resource's counts to the batch.
func (c *counter) tally(s *scratch, g *group, items, bytes int64) {
	for i := range s.tallies {
		if s.tallies[i].g == g {
			s.tallies[i].items += items
			s.tallies[i].bytes += bytes
			return
		}
	}
	if len(s.tallies) == maxTalliesPerBatch {
		c.record(s)
	}
	s.tallies = append(s.tallies, tally{g: g, items: items, bytes: bytes})
}

// record adds the batch's tallies to their groups' totals and empties them.
func (c *counter) record(s *scratch) {
	for i := range s.tallies {
		t := &s.tallies[i]
		t.g.items.Add(t.items)
		t.g.bytes.Add(t.bytes)
	}
	clear(s.tallies)
	s.tallies = s.tallies[:0]
}

// checkRequestSize applies max_items_per_request. A refused request is
// counted and its items are not metered as ingested.
func (c *counter) checkRequestSize(items int) error {
	if c.maxItems == 0 || items <= c.maxItems {
		return nil
	}
	ctx := context.Background()
	c.telemetry.ProcessorWirecountRefusedRequests.Add(ctx, 1, c.baseOpts...)
	c.telemetry.ProcessorWirecountRefusedItems.Add(ctx, int64(items), c.baseOpts...)
	return consumererror.NewPermanent(fmt.Errorf("%w: %d %s items, limit is %d", ErrTooManyItems, items, c.signal, c.maxItems))
}

func (c *counter) getScratch() *scratch { return c.scratch.Get().(*scratch) }

// appendPdataKey appends the group key of a resource's attributes. Values
// render like pcommon.Value.AsString; strings, ints and bools without an
// allocation, other kinds through AsString itself.
func (c *counter) appendPdataKey(dst []byte, attrs pcommon.Map) []byte {
	for _, k := range c.groupBy {
		start := len(dst)
		v, ok := attrs.Get(k)
		switch {
		case !ok:
			dst = append(dst, MissingValue...)
		case v.Type() == pcommon.ValueTypeStr:
			dst = append(dst, v.Str()...)
		case v.Type() == pcommon.ValueTypeInt:
			dst = strconv.AppendInt(dst, v.Int(), 10)
		case v.Type() == pcommon.ValueTypeBool:
			dst = strconv.AppendBool(dst, v.Bool())
		default:
			dst = append(dst, v.AsString()...)
		}
		dst = endKeyValue(dst, start)
	}
	return dst
}

// processTraces meters a traces batch on pdata: items are the spans of each
// ResourceSpans, bytes its encoded size.
func (c *counter) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	if wirestageextension.StagedTraces(ctx, c.stage.id, td) {
		return td, nil
	}
	if c.maxItems > 0 {
		if err := c.checkRequestSize(td.SpanCount()); err != nil {
			return td, err
		}
	}
	var sizer ptrace.ProtoMarshaler
	s := c.getScratch()
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		items := 0
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			items += sss.At(j).Spans().Len()
		}
		s.key = c.appendPdataKey(s.key[:0], rs.Resource().Attributes())
		c.tally(s, c.lookup(s.key), int64(items), int64(sizer.ResourceSpansSize(rs)))
	}
	c.record(s)
	c.scratch.Put(s)
	return td, nil
}

// processMetrics meters a metrics batch on pdata: items are the data points
// of each ResourceMetrics, bytes its encoded size.
func (c *counter) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	if wirestageextension.StagedMetrics(ctx, c.stage.id, md) {
		return md, nil
	}
	if c.maxItems > 0 {
		if err := c.checkRequestSize(md.DataPointCount()); err != nil {
			return md, err
		}
	}
	var sizer pmetric.ProtoMarshaler
	s := c.getScratch()
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		items := 0
		sms := rm.ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				items += dataPointCount(ms.At(k))
			}
		}
		s.key = c.appendPdataKey(s.key[:0], rm.Resource().Attributes())
		c.tally(s, c.lookup(s.key), int64(items), int64(sizer.ResourceMetricsSize(rm)))
	}
	c.record(s)
	c.scratch.Put(s)
	return md, nil
}

// dataPointCount counts a metric's data points the way
// pmetric.Metrics.DataPointCount does.
func dataPointCount(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		return m.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSummary:
		return m.Summary().DataPoints().Len()
	}
	return 0
}

// processLogs meters a logs batch on pdata: items are the log records of
// each ResourceLogs, bytes its encoded size.
func (c *counter) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	if wirestageextension.StagedLogs(ctx, c.stage.id, ld) {
		return ld, nil
	}
	if c.maxItems > 0 {
		if err := c.checkRequestSize(ld.LogRecordCount()); err != nil {
			return ld, err
		}
	}
	var sizer plog.ProtoMarshaler
	s := c.getScratch()
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		items := 0
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			items += sls.At(j).LogRecords().Len()
		}
		s.key = c.appendPdataKey(s.key[:0], rl.Resource().Attributes())
		c.tally(s, c.lookup(s.key), int64(items), int64(sizer.ResourceLogsSize(rl)))
	}
	c.record(s)
	c.scratch.Put(s)
	return ld, nil
}

// processProfiles meters a profiles batch on pdata: items are the samples
// of each ResourceProfiles, bytes its encoded size without the request's
// dictionary.
func (c *counter) processProfiles(ctx context.Context, pd pprofile.Profiles) (pprofile.Profiles, error) {
	if wirestageextension.StagedProfiles(ctx, c.stage.id, pd) {
		return pd, nil
	}
	if c.maxItems > 0 {
		if err := c.checkRequestSize(pd.SampleCount()); err != nil {
			return pd, err
		}
	}
	var sizer pprofile.ProtoMarshaler
	s := c.getScratch()
	rps := pd.ResourceProfiles()
	for i := 0; i < rps.Len(); i++ {
		rp := rps.At(i)
		items := 0
		sps := rp.ScopeProfiles()
		for j := 0; j < sps.Len(); j++ {
			ps := sps.At(j).Profiles()
			for k := 0; k < ps.Len(); k++ {
				items += ps.At(k).Samples().Len()
			}
		}
		s.key = c.appendPdataKey(s.key[:0], rp.Resource().Attributes())
		c.tally(s, c.lookup(s.key), int64(items), int64(sizer.ResourceProfilesSize(rp)))
	}
	c.record(s)
	c.scratch.Put(s)
	return pd, nil
}
