// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// memberObserver is the transport.Observer of one member of a resolver's
// fleet. Its series carry the member's ID (attribute member) rather than a
// shard index, which changes as members come and go. It feeds the component
// status through its own health slot, freed by leave when the member
// leaves the fleet.
type memberObserver struct {
	o     *observer
	slot  uint32
	attrs metric.MeasurementOption
	acks  [3]metric.MeasurementOption
}

var _ transport.Observer = (*memberObserver)(nil)

// forMember returns the observer of member id at endpoint, its series
// recorded at 0.
func (o *observer) forMember(id, endpoint string) *memberObserver {
	memberAttr := attribute.String("member", id)
	m := &memberObserver{o: o, slot: o.health.addTarget(id, endpoint), attrs: o.with(memberAttr)}
	for status, name := range [3]string{"accepted", "retry", "rejected"} {
		m.acks[status] = o.with(memberAttr, attribute.String("status", name))
	}
	ctx := context.Background()
	for _, c := range []metric.Int64Counter{
		o.tb.ProcessorSdpshardFramesSent, o.tb.ProcessorSdpshardBytesSent, o.tb.ProcessorSdpshardItemsSent,
		o.tb.ProcessorSdpshardRetransmissions, o.tb.ProcessorSdpshardReconnects,
		o.tb.ProcessorSdpshardConnectionFailures, o.tb.ProcessorSdpshardUndeliveredItems,
	} {
		c.Add(ctx, 0, m.attrs)
	}
	for _, status := range m.acks {
		o.tb.ProcessorSdpshardAcks.Add(ctx, 0, status)
	}
	return m
}

func (m *memberObserver) FramesSent(_ uint32, s transport.Sent) {
	ctx, tb := context.Background(), m.o.tb
	tb.ProcessorSdpshardFramesSent.Add(ctx, int64(s.Frames), m.attrs)
	tb.ProcessorSdpshardBytesSent.Add(ctx, int64(s.Bytes), m.attrs)
	tb.ProcessorSdpshardItemsSent.Add(ctx, int64(s.Items), m.attrs)
	if s.Retransmissions > 0 {
		tb.ProcessorSdpshardRetransmissions.Add(ctx, int64(s.Retransmissions), m.attrs)
	}
}

func (m *memberObserver) AckReceived(_ uint32, status sdp.AckStatus, frames int) {
	if int(status) >= len(m.acks) {
		return
	}
	m.o.tb.ProcessorSdpshardAcks.Add(context.Background(), int64(frames), m.acks[status])
}

// leave frees the member's health slot; its client has stopped.
func (m *memberObserver) leave() { m.o.health.removeTarget(m.slot) }

func (m *memberObserver) Connected(_ uint32, reconnect bool) {
	m.o.health.connected(m.slot)
	if reconnect {
		m.o.tb.ProcessorSdpshardReconnects.Add(context.Background(), 1, m.attrs)
	}
}

func (m *memberObserver) Disconnected(_ uint32, err error) {
	m.o.tb.ProcessorSdpshardConnectionFailures.Add(context.Background(), 1, m.attrs)
	m.o.health.disconnected(m.slot, err)
}

func (m *memberObserver) Undelivered(_ uint32, _, items int) {
	m.o.tb.ProcessorSdpshardUndeliveredItems.Add(context.Background(), int64(items), m.attrs)
}
