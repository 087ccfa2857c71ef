// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"errors"
	"sync/atomic"

	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension/internal/metadata"
)

// Outcomes, the values of the requests metric's outcome attribute.
const (
	outcomePassed           = "passed"
	outcomeDiverted         = "diverted"
	outcomeRefusedRetryable = "refused_retryable"
	outcomeRefusedPermanent = "refused_permanent"
	outcomeMalformed        = "malformed"
)

// Indexes of the outcomes in outcomes and in the per-outcome tables.
const (
	passed = iota
	diverted
	refusedRetryable
	refusedPermanent
	malformed
)

var outcomes = [...]string{
	passed:           outcomePassed,
	diverted:         outcomeDiverted,
	refusedRetryable: outcomeRefusedRetryable,
	refusedPermanent: outcomeRefusedPermanent,
	malformed:        outcomeMalformed,
}

// counter is one series of an asynchronous counter: the cumulative value
// run adds to, and whether anything was ever added, so that the callback
// reports the series a synchronous counter would have, no more (a series
// appears with the first request that records it, even when that records
// zero items).
type counter struct {
	n    atomic.Int64
	seen atomic.Bool
}

func (c *counter) add(v int64) {
	c.n.Add(v)
	if !c.seen.Load() {
		c.seen.Store(true)
	}
}

// observe reports c through o unless nothing was ever added to it.
func (c *counter) observe(o metric.Int64Observer, opts []metric.ObserveOption) {
	if c.seen.Load() {
		o.Observe(c.n.Load(), opts...)
	}
}

// requestCounts holds the per-request metrics (requests, items, diverted
// items) as atomic counters that run adds to, and that callbacks report
// when the meter collects: recording a request costs a few atomic adds and
// no attribute lookup. The metrics are asynchronous counters, cumulative
// and monotonic like the synchronous ones they replace, with the same
// names, units, attributes and values. Unlike those, they carry no
// exemplars: an observation has no request context to take a trace from.
type requestCounts struct {
	requests [signals][len(outcomes)]counter
	items    [signals]counter
	diverted [signals]counter

	// Attributes built once, by signal and by signal and outcome.
	sigAttrs     [signals][]metric.ObserveOption
	outcomeAttrs [signals][len(outcomes)][]metric.ObserveOption
}

// request records a request of signal index s that ended in outcome o.
func (rc *requestCounts) request(s, o int) { rc.requests[s][o].add(1) }

// register has tb's callbacks report the counts for as long as the meter
// provider lives (see wireStage.Shutdown).
func (rc *requestCounts) register(tb *metadata.TelemetryBuilder) error {
	return errors.Join(
		tb.RegisterExtensionWirestageRequestsCallback(rc.observeRequests),
		tb.RegisterExtensionWirestageItemsCallback(rc.observeItems),
		tb.RegisterExtensionWirestageDivertedItemsCallback(rc.observeDiverted),
	)
}

func (rc *requestCounts) observeRequests(_ context.Context, o metric.Int64Observer) error {
	for s := range signals {
		for out := range outcomes {
			rc.requests[s][out].observe(o, rc.outcomeAttrs[s][out])
		}
	}
	return nil
}

func (rc *requestCounts) observeItems(_ context.Context, o metric.Int64Observer) error {
	for s := range signals {
		rc.items[s].observe(o, rc.sigAttrs[s])
	}
	return nil
}

func (rc *requestCounts) observeDiverted(_ context.Context, o metric.Int64Observer) error {
	for s := range signals {
		rc.diverted[s].observe(o, rc.sigAttrs[s])
	}
	return nil
}
