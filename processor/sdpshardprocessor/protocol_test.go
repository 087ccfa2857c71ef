// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	zapobserver "go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

func TestOverLongAckIsAProtocolErrorNotAFullQueue(t *testing.T) {
	endpoints := newEndpoints(t, "unix", 1)
	// The sidecar answers every frame with an Ack whose detail takes it
	// past the contract's 64 KiB limit for Ack frames.
	serveRawFrames(t, endpoints[0], func(f *sdp.ResourceFrame) (sdp.Ack, bool) {
		return sdp.Ack{Sequence: f.Sequence, Status: sdp.AckAccepted, Detail: strings.Repeat("x", sdp.MaxAckFrameSize)}, true
	})
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	core, logs := zapobserver.New(zapcore.WarnLevel)
	set := testSettings(tel)
	set.Logger = zap.New(core)
	cfg := testConfig(endpoints)
	cfg.WaitForAck = true
	sc := signalCases[0]
	p, _ := sc.create(t, NewFactory(), set, cfg)
	host := &statusHost{Host: componenttest.NewNopHost()}
	require.NoError(t, p.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })

	_, err := sc.consume(context.Background(), p, 0, 1, 1)
	require.ErrorIs(t, err, transport.ErrProtocol)
	// Retryable: a restarted or fixed sidecar can take the batch; the
	// transport itself does not resend into the same failure.
	assert.False(t, consumererror.IsPermanent(err))

	assert.Equal(t, int64(1), sumMetric(t, tel, "otelcol_processor_sdpshard_refused_batches", map[string]string{"reason": "protocol"}))
	assert.Zero(t, sumMetric(t, tel, "otelcol_processor_sdpshard_refused_batches", map[string]string{"reason": "queue_full"}))

	refused := logs.FilterMessage("Batches refused; clients are told to retry unless the reason is rejected or malformed").All()
	require.Len(t, refused, 1)
	fields := refused[0].ContextMap()
	assert.Equal(t, int64(1), fields["refused_protocol"])
	assert.NotContains(t, fields, "refused_queue_full")

	waitFor(t, "the status to name the protocol error", func() bool {
		for _, e := range host.errors() {
			if e != nil && strings.Contains(e.Error(), "broke the protocol") && strings.Contains(e.Error(), "Ack") {
				return true
			}
		}
		return false
	})
	assert.NotZero(t, logs.FilterMessageSnippet("Sidecar broke the protocol (reason protocol)").Len())
}
