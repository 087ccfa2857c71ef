// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor/internal/metadata"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// ackStatuses names the sdp.AckStatus values, by value, as the acks
// metric's status attribute does.
var ackStatuses = [...]string{"accepted", "retry", "rejected"}

// connCounts holds the counts of one connection (a static shard's or a
// fleet member's) behind the metrics reported on every write and every
// Ack: frames, bytes and items sent, retransmissions and acks. The
// transport's writer and reader add to them with atomic adds alone, and the
// observable counters read them when the Collector's telemetry is
// collected, so the send path pays no metric SDK call (attribute lookup,
// aggregation) per write or Ack.
type connCounts struct {
	attrs    metric.MeasurementOption                   // identity plus shard or member
	ackAttrs [len(ackStatuses)]metric.MeasurementOption // attrs plus status, by sdp.AckStatus

	frames, bytes, items, retransmissions atomic.Int64
	acks                                  [len(ackStatuses)]atomic.Int64
}

func (c *connCounts) sent(s transport.Sent) {
	c.frames.Add(int64(s.Frames))
	c.bytes.Add(int64(s.Bytes))
	c.items.Add(int64(s.Items))
	if s.Retransmissions > 0 {
		c.retransmissions.Add(int64(s.Retransmissions))
	}
}

func (c *connCounts) acked(status sdp.AckStatus, frames int) {
	if int(status) < len(c.acks) {
		c.acks[status].Add(int64(frames))
	}
}

// observer turns transport events into the processor's metrics. The
// attribute sets are built once: its methods run on the send path.
type observer struct {
	tb           *metadata.TelemetryBuilder
	health       *health
	shards       []*connCounts              // by shard index, static endpoints only
	shardAttrs   []metric.MeasurementOption // shards[i].attrs
	refusedAttrs map[string]metric.MeasurementOption
	idAttrs      metric.MeasurementOption // identity alone: the series without a shard or reason
	// with returns the attribute set of identity plus kvs, for series
	// made later (a fleet's members).
	with func(kvs ...attribute.KeyValue) metric.MeasurementOption

	mu sync.Mutex
	// observed is every connCounts the observable counters report: the
	// static shards, or every member the fleet has had (see memberCounts).
	observed []*connCounts
	members  map[string]*connCounts // by member ID
}

// refusalReasons lists every value of the refused_batches reason attribute.
var refusalReasons = [...]string{reasonQueueFull, reasonClosed, reasonRejected, reasonUndelivered, reasonCanceled, reasonMalformed, reasonStorage, reasonProtocol, reasonNoMembers}

// newObserver builds the attribute sets of every series; identity is what
// componenttelemetry.Identity returns for the set (nothing when the
// Collector injects the component's ID).
func newObserver(tb *metadata.TelemetryBuilder, hl *health, identity []attribute.KeyValue, shards int) *observer {
	with := func(kvs ...attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(append(slices.Clone(identity), kvs...)...))
	}
	o := &observer{
		tb: tb, health: hl, idAttrs: with(), with: with,
		refusedAttrs: make(map[string]metric.MeasurementOption),
		members:      make(map[string]*connCounts),
	}
	for shard := range shards {
		c := o.newConnCounts(attribute.Int("shard", shard))
		o.shards = append(o.shards, c)
		o.shardAttrs = append(o.shardAttrs, c.attrs)
	}
	o.observed = slices.Clone(o.shards)
	for _, reason := range refusalReasons {
		o.refusedAttrs[reason] = with(attribute.String("reason", reason))
	}
	return o
}

// newConnCounts returns zero counts whose series carry identity plus conn
// (the shard or the member).
func (o *observer) newConnCounts(conn attribute.KeyValue) *connCounts {
	c := &connCounts{attrs: o.with(conn)}
	for status, name := range ackStatuses {
		c.ackAttrs[status] = o.with(conn, attribute.String("status", name))
	}
	return c
}

// registerCounters registers the callback of the observable counters,
// which reports every connection's counts, 0 included, so that each series
// exists from the start (as recordZeros does for the synchronous ones).
//
// It registers on the meter, not through the TelemetryBuilder, whose
// Shutdown at the processor's shutdown would unregister it: the counts
// must stay reported until the Collector's telemetry shuts down, after its
// components, so that the last export of a push exporter still carries
// what was sent up to shutdown, as synchronous counters did. The
// registration ends with the meter provider, which the Collector builds
// anew with every configuration it runs.
func (o *observer) registerCounters(meter metric.Meter) error {
	tb := o.tb
	_, err := meter.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, c := range o.observed {
			obs.ObserveInt64(tb.ProcessorSdpshardFramesSent, c.frames.Load(), c.attrs)
			obs.ObserveInt64(tb.ProcessorSdpshardBytesSent, c.bytes.Load(), c.attrs)
			obs.ObserveInt64(tb.ProcessorSdpshardItemsSent, c.items.Load(), c.attrs)
			obs.ObserveInt64(tb.ProcessorSdpshardRetransmissions, c.retransmissions.Load(), c.attrs)
			for status := range c.acks {
				obs.ObserveInt64(tb.ProcessorSdpshardAcks, c.acks[status].Load(), c.ackAttrs[status])
			}
		}
		return nil
	}, tb.ProcessorSdpshardFramesSent, tb.ProcessorSdpshardBytesSent, tb.ProcessorSdpshardItemsSent,
		tb.ProcessorSdpshardRetransmissions, tb.ProcessorSdpshardAcks)
	return err
}

// recordZeros records 0 on every synchronous counter for every shard and
// reason, so that each series exists from the start: a dashboard or alert
// sees 0 rather than nothing until the first event, and a count recorded
// just before shutdown is an increase over a value already exported. The
// observable counters report 0 by themselves (registerCounters).
func (o *observer) recordZeros() {
	ctx := context.Background()
	for _, attrs := range o.shardAttrs {
		o.recordConnZeros(attrs)
	}
	for _, attrs := range o.refusedAttrs {
		o.tb.ProcessorSdpshardRefusedBatches.Add(ctx, 0, attrs)
	}
	o.tb.ProcessorSdpshardUnroutableItems.Add(ctx, 0, o.idAttrs)
	for _, c := range []metric.Int64Counter{o.tb.ProcessorSdpshardMembershipChanges, o.tb.ProcessorSdpshardReroutedFrames, o.tb.ProcessorSdpshardResolverErrors} {
		c.Add(ctx, 0, o.idAttrs)
	}
}

// recordConnZeros records 0 on the synchronous counters of one connection.
func (o *observer) recordConnZeros(attrs metric.MeasurementOption) {
	ctx := context.Background()
	for _, c := range []metric.Int64Counter{
		o.tb.ProcessorSdpshardReconnects, o.tb.ProcessorSdpshardConnectionFailures, o.tb.ProcessorSdpshardUndeliveredItems,
		o.tb.ProcessorSdpshardEjections,
	} {
		c.Add(ctx, 0, attrs)
	}
}

var _ transport.Observer = (*observer)(nil)

func (o *observer) FramesSent(shard uint32, s transport.Sent) { o.shards[shard].sent(s) }

func (o *observer) AckReceived(shard uint32, status sdp.AckStatus, frames int) {
	o.shards[shard].acked(status, frames)
}

func (o *observer) Connected(shard uint32, reconnect bool) {
	o.health.connected(shard)
	if reconnect {
		o.tb.ProcessorSdpshardReconnects.Add(context.Background(), 1, o.shardAttrs[shard])
	}
}

func (o *observer) Disconnected(shard uint32, err error) {
	o.tb.ProcessorSdpshardConnectionFailures.Add(context.Background(), 1, o.shardAttrs[shard])
	o.health.disconnected(shard, err)
}

func (o *observer) Undelivered(shard uint32, _, items int) {
	o.tb.ProcessorSdpshardUndeliveredItems.Add(context.Background(), int64(items), o.shardAttrs[shard])
}
