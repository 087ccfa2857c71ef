// SPDX-License-Identifier: Apache-2.0

package componenttelemetry

import (
	"sync/atomic"

	"go.opentelemetry.io/otel/metric"
)

// Count is one series of an observable counter fed from a hot path: a
// cumulative value that Add changes with atomic operations alone, and that
// a callback of the counter reports with Observe when the telemetry is
// collected. It replaces a synchronous counter's Add, which looks up the
// attribute set and aggregates on every call.
//
// The series appears when a synchronous counter's would have: with the
// first Add, even of zero, and not before. The zero Count is ready to use.
type Count struct {
	n    atomic.Int64
	seen atomic.Bool
}

// Add adds v to the count.
func (c *Count) Add(v int64) {
	c.n.Add(v)
	if !c.seen.Load() {
		c.seen.Store(true)
	}
}

// Observe reports the count through o with opts, unless nothing was ever
// added to it.
func (c *Count) Observe(o metric.Int64Observer, opts ...metric.ObserveOption) {
	if c.seen.Load() {
		o.Observe(c.n.Load(), opts...)
	}
}
