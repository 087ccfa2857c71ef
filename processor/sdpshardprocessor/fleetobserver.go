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
	o      *observer
	slot   uint32
	counts *connCounts
	attrs  metric.MeasurementOption // counts.attrs
}

var _ transport.Observer = (*memberObserver)(nil)

// forMember returns the observer of member id at endpoint. Its synchronous
// series are recorded at 0 (which changes nothing for a member seen before)
// and its observable ones are reported from now on.
func (o *observer) forMember(id, endpoint string) *memberObserver {
	c := o.memberCounts(id)
	o.recordConnZeros(c.attrs)
	return &memberObserver{o: o, slot: o.health.addTarget(id, endpoint), counts: c, attrs: c.attrs}
}

// memberCounts returns the counts of member id, made and observed from the
// first time the member joins the fleet.
//
// They stay observed after the member leaves, and a member that comes back
// (or whose client is replaced, as when it is re-addressed) continues from
// them: the series are cumulative counters, and the synchronous counters
// they replace behaved that way, since the metric SDK keeps the sum of
// every attribute set it has seen for the life of the meter provider.
// Forgetting a member that left would drop series a scrape has shown and,
// if it came back, restart them at 0, which a Prometheus rate() reads as a
// counter reset. So the map is never shrunk: it holds one entry per member
// ID the processor has ever had, a bound the SDK's own storage had before
// (and the SDK's cardinality limit per metric still applies to what is
// exported, as it did).
func (o *observer) memberCounts(id string) *connCounts {
	o.mu.Lock()
	defer o.mu.Unlock()
	if c, ok := o.members[id]; ok {
		return c
	}
	c := o.newConnCounts(attribute.String("member", id))
	o.members[id] = c
	o.observed = append(o.observed, c)
	return c
}

func (m *memberObserver) FramesSent(_ uint32, s transport.Sent) { m.counts.sent(s) }

func (m *memberObserver) AckReceived(_ uint32, status sdp.AckStatus, frames int) {
	m.counts.acked(status, frames)
}

// leave frees the member's health slot; its client has stopped. Its counts
// stay (see memberCounts).
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
