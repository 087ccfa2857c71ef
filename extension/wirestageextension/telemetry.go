// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension/internal/metadata"
	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry"
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

// requestCounts holds the per-request metrics (requests, items, diverted
// items) as atomic counters that run adds to, and that callbacks report
// when the meter collects: recording a request costs a few atomic adds and
// no attribute lookup. The metrics are asynchronous counters, cumulative
// and monotonic like the synchronous ones they replace, with the same
// names, units, attributes and values. Unlike those, they carry no
// exemplars: an observation has no request context to take a trace from.
type requestCounts struct {
	requests [signals][len(outcomes)]componenttelemetry.Count
	items    [signals]componenttelemetry.Count
	diverted [signals]componenttelemetry.Count

	// Attributes built once, by signal and by signal and outcome.
	sigAttrs     [signals][]metric.ObserveOption
	outcomeAttrs [signals][len(outcomes)][]metric.ObserveOption
}

// request records a request of signal index s that ended in outcome o.
func (rc *requestCounts) request(s, o int) { rc.requests[s][o].Add(1) }

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
			rc.requests[s][out].Observe(o, rc.outcomeAttrs[s][out]...)
		}
	}
	return nil
}

func (rc *requestCounts) observeItems(_ context.Context, o metric.Int64Observer) error {
	for s := range signals {
		rc.items[s].Observe(o, rc.sigAttrs[s]...)
	}
	return nil
}

func (rc *requestCounts) observeDiverted(_ context.Context, o metric.Int64Observer) error {
	for s := range signals {
		rc.diverted[s].Observe(o, rc.sigAttrs[s]...)
	}
	return nil
}
