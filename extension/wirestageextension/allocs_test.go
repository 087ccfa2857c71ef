// SPDX-License-Identifier: Apache-2.0

//go:build !race

// The race detector makes sync.Pool drop pooled values at random, so the
// allocation pins only hold (and only run) without it.

package wirestageextension

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// walkingStage reads every resource's attributes, as wirecount and sdpshard
// do, and diverts every other resource, so that run re-assembles the
// request.
type walkingStage struct {
	keep []int
}

func (s *walkingStage) ProcessRequest(_ context.Context, req otlpwire.Request) (Result, error) {
	s.keep = s.keep[:0]
	i := 0
	for rd, err := range req.Resources() {
		if err != nil {
			return Result{}, err
		}
		res, err := rd.Resource()
		if err != nil {
			return Result{}, err
		}
		if _, err := res.Hash(); err != nil {
			return Result{}, err
		}
		if i%2 == 1 {
			s.keep = append(s.keep, i)
		}
		i++
	}
	return Result{Divert: true, Keep: s.keep}, nil
}

// TestRunAllocationsDoNotGrowWithResources pins the stage's own cost: the
// request mark is its only allocation, whatever the number of resources,
// and a request the stage leaves alone costs none.
func TestRunAllocationsDoNotGrowWithResources(t *testing.T) {
	w, err := newWireStage(settingsFor(t), &Config{Stages: []component.ID{stageID, countID}, DivertAllPipelines: true, RetryAfter: time.Second})
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Shutdown(context.Background())) }()
	_, err = w.register(stageID, otlpwire.SignalTraces, &walkingStage{keep: make([]int, 0, 256)}, true)
	require.NoError(t, err)
	_, err = w.register(countID, otlpwire.SignalTraces, &walkingStage{keep: make([]int, 0, 256)}, true)
	require.NoError(t, err)

	allocs := map[int]float64{}
	for _, resources := range []int{1, 8, 64, 256} {
		names := make([]string, resources)
		for i := range names {
			names[i] = fmt.Sprintf("service-%d", i)
		}
		body := marshal(t, traces(2, names...))
		run := func() {
			c := w.getCall()
			if res := w.run(context.Background(), otlpwire.SignalTraces, body, c); res.err != nil {
				t.Fatal(res.err)
			}
			w.putCall(c)
		}
		run() // grows the pooled buffers
		allocs[resources] = testing.AllocsPerRun(100, run)
	}
	for resources, n := range allocs {
		assert.LessOrEqual(t, n, 1.0, "%d resources: %v allocations per request", resources, n)
	}
	assert.Equal(t, allocs[1], allocs[256], "allocations grow with resources: %v", allocs)

	// A signal without stages passes through for free.
	body := marshal(t, traces(2, "a"))
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_ = w.run(context.Background(), otlpwire.SignalLogs, body, nil)
	}))
}

// TestRunRecordsTelemetryWithoutAllocating pins the cost of the per-request
// metrics with the SDK's meter provider behind them (the test above has
// none): a request that passes and one that is diverted whole allocate
// only their mark.
func TestRunRecordsTelemetryWithoutAllocating(t *testing.T) {
	w, _ := startedWithTelemetry(t)
	tee := StageFunc(func(context.Context, otlpwire.Request) (Result, error) { return Result{}, nil })
	divertAll := StageFunc(func(context.Context, otlpwire.Request) (Result, error) { return Result{Divert: true}, nil })
	_, err := w.register(stageID, otlpwire.SignalTraces, tee, true)
	require.NoError(t, err)
	_, err = w.register(stageID, otlpwire.SignalLogs, divertAll, true)
	require.NoError(t, err)

	traceBody := marshal(t, traces(2, "a"))
	logBody, err := (&plog.ProtoMarshaler{}).MarshalLogs(logs("a"))
	require.NoError(t, err)
	c := new(call)
	for _, r := range []struct {
		sig     otlpwire.Signal
		body    []byte
		outcome int
	}{
		{otlpwire.SignalTraces, traceBody, passed},
		{otlpwire.SignalLogs, logBody, diverted},
	} {
		s := int(r.sig) - 1
		before := valueOf(&w.counts.requests[s][r.outcome])
		n := testing.AllocsPerRun(100, func() {
			if res := w.run(context.Background(), r.sig, r.body, c); res.err != nil {
				t.Fatal(res.err)
			}
		})
		assert.Equal(t, 1.0, n, "%v: allocations per request", r.sig)
		// AllocsPerRun runs the function once more than it measures.
		assert.Equal(t, int64(101), valueOf(&w.counts.requests[s][r.outcome])-before, "%v: %s requests recorded", r.sig, outcomes[r.outcome])
	}
}
