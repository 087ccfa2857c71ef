// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	zapobserver "go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// statusHost is a host that records the status events reported to it.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []componentstatus.Status
	errs   []error // the error of each event, nil for none
}

var _ componentstatus.Reporter = (*statusHost)(nil)

func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev.Status())
	h.errs = append(h.errs, ev.Err())
}

func (h *statusHost) errors() []error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]error(nil), h.errs...)
}

func (h *statusHost) statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]componentstatus.Status(nil), h.events...)
}

func (h *statusHost) last() componentstatus.Status {
	s := h.statuses()
	if len(s) == 0 {
		return componentstatus.StatusNone
	}
	return s[len(s)-1]
}

func TestDeadSidecarIsVisible(t *testing.T) {
	endpoints := newEndpoints(t, "unix", 2)
	startSidecar(t, endpoints[0], newRecorder())
	// Nothing listens on endpoints[1] yet.
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	core, logs := zapobserver.New(zapcore.InfoLevel)
	set := testSettings(tel)
	set.Logger = zap.New(core)
	cfg := testConfig(endpoints)
	sc := signalCases[0]
	p, _ := sc.create(t, NewFactory(), set, cfg)
	host := &statusHost{Host: componenttest.NewNopHost()}
	require.NoError(t, p.Start(context.Background(), host))

	waitFor(t, "a recoverable error status", func() bool { return host.last() == componentstatus.StatusRecoverableError })
	waitFor(t, "several failed attempts", func() bool {
		return sumMetric(t, tel, "otelcol_processor_sdpshard_connection_failures", map[string]string{"shard": "1"}) >= 5
	})
	assert.Zero(t, sumMetric(t, tel, "otelcol_processor_sdpshard_connection_failures", map[string]string{"shard": "0"}))
	unreachable := logs.FilterMessage("Sidecar unreachable; frames for its shard are held and retried")
	assert.Equal(t, 1, unreachable.Len(), "one warning per %v, not one per attempt", warnInterval)
	assert.Equal(t, uint32(1), unreachable.All()[0].ContextMap()["shard"])

	// The sidecar comes up: the status returns to OK.
	startSidecar(t, endpoints[1], newRecorder())
	waitFor(t, "status OK", func() bool { return host.last() == componentstatus.StatusOK })
	assert.Equal(t, 1, logs.FilterMessage("Sidecar reachable again").Len())
	_, err := sc.consume(context.Background(), p, 0, 4, 2)
	require.NoError(t, err)
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Equal(t, componentstatus.StatusOK, host.last(), "no status reported after shutdown")
}

func TestMetricsExistFromStartAtZero(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := testConfig(newEndpoints(t, "unix", 2))
	p, _ := signalCases[0].create(t, NewFactory(), testSettings(tel), cfg)
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	for _, name := range []string{
		"otelcol_processor_sdpshard_undelivered_items",
		"otelcol_processor_sdpshard_connection_failures",
		"otelcol_processor_sdpshard_reconnects",
		"otelcol_processor_sdpshard_frames_sent",
		"otelcol_processor_sdpshard_acks",
		"otelcol_processor_sdpshard_refused_batches",
		"otelcol_processor_sdpshard_unroutable_items",
	} {
		_, err := tel.GetMetric(name)
		require.NoError(t, err, "%s must exist before any event", name)
		assert.Zero(t, sumMetric(t, tel, name, nil), name)
	}
	for _, shard := range []string{"0", "1"} {
		_, err := tel.GetMetric("otelcol_processor_sdpshard_undelivered_items")
		require.NoError(t, err)
		assert.Zero(t, sumMetric(t, tel, "otelcol_processor_sdpshard_undelivered_items", map[string]string{"shard": shard}))
	}
}

func TestRefusalsAreLoggedRateLimited(t *testing.T) {
	endpoints := newEndpoints(t, "unix", 1)
	startSidecar(t, endpoints[0], newRecorder())
	core, logs := zapobserver.New(zapcore.WarnLevel)
	set := testSettings(nil)
	set.Logger = zap.New(core)
	p, _ := signalCases[0].create(t, NewFactory(), set, testConfig(endpoints))
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, p.Shutdown(context.Background()))
	for b := range 3 {
		_, err := signalCases[0].consume(context.Background(), p, b, 1, 1)
		require.ErrorIs(t, err, transport.ErrClosed)
	}
	refused := logs.FilterMessage("Batches refused; clients are told to retry unless the reason is rejected or malformed")
	require.Equal(t, 1, refused.Len(), "the first refusal is logged at once, the next ones within %v are not", warnInterval)
	assert.Equal(t, int64(1), refused.All()[0].ContextMap()["refused_closed"])
}

func TestHealthWarnsAgainAfterTheInterval(t *testing.T) {
	core, logs := zapobserver.New(zapcore.WarnLevel)
	h := newHealth(zap.New(core), []string{"unix:///a.sock"})
	h.interval = 20 * time.Millisecond
	for range 3 {
		h.disconnected(0, transport.ErrClosed)
	}
	time.Sleep(30 * time.Millisecond)
	h.disconnected(0, transport.ErrClosed)
	warnings := logs.FilterMessage("Sidecar unreachable; frames for its shard are held and retried").All()
	require.Len(t, warnings, 2)
	assert.Equal(t, int64(1), warnings[0].ContextMap()["failed_attempts"])
	assert.Equal(t, int64(3), warnings[1].ContextMap()["failed_attempts"], "the second warning counts the attempts since the first")
}
