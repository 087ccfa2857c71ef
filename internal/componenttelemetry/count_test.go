// SPDX-License-Identifier: Apache-2.0

package componenttelemetry_test

import (
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"

	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry"
)

// observed records what an Int64Observer was given.
type observed struct {
	embedded.Int64Observer
	values []int64
}

func (o *observed) Observe(v int64, _ ...metric.ObserveOption) { o.values = append(o.values, v) }

func TestCountAppearsWithItsFirstAdd(t *testing.T) {
	var c componenttelemetry.Count
	var o observed
	c.Observe(&o)
	if len(o.values) != 0 {
		t.Fatalf("a Count never added to reported %v", o.values)
	}
	c.Add(0)
	c.Observe(&o)
	c.Add(5)
	c.Add(2)
	c.Observe(&o)
	if want := []int64{0, 7}; len(o.values) != 2 || o.values[0] != want[0] || o.values[1] != want[1] {
		t.Fatalf("observed %v, want %v", o.values, want)
	}
	if n := testing.AllocsPerRun(100, func() { c.Add(1) }); n != 0 {
		t.Fatalf("Add allocates %v times", n)
	}
}
