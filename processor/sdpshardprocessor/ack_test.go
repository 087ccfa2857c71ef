// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// TestDefaultAnswersOKOnlyAfterAck: with the default configuration a batch
// is answered only once its sidecar has acknowledged every frame.
func TestDefaultAnswersOKOnlyAfterAck(t *testing.T) {
	endpoints := newEndpoints(t, "unix", 1)
	rec := newRecorder()
	startSidecar(t, endpoints[0], rec)
	cfg := testConfig(endpoints)
	require.True(t, cfg.WaitForAck, "the default waits for acks")
	sc := signalCases[0]
	p, _ := sc.create(t, NewFactory(), testSettings(nil), cfg)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })

	unblock := rec.block()
	defer unblock()
	done := make(chan error, 1)
	go func() {
		_, err := sc.consume(context.Background(), p, 0, 3, 4)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("batch answered (%v) before the sidecar acknowledged it", err)
	case <-time.After(200 * time.Millisecond):
	}
	unblock()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("batch not answered after the sidecar acknowledged it")
	}
	assert.Len(t, collect(t, sc, []*recorder{rec}).items, 12, "every item was handled before OK")
}

// TestAcksArePipelinedAcrossRequests: concurrent batches do not wait for
// each other. The sidecar answers nothing until it has read a frame of
// every one of n concurrent batches, then acknowledges them all with one
// cumulative Ack; a processor that sent a batch only after the previous
// one was acknowledged would never get there.
func TestAcksArePipelinedAcrossRequests(t *testing.T) {
	const n = 8
	endpoints := newEndpoints(t, "unix", 1)
	startBatchingSidecar(t, endpoints[0], n)
	cfg := testConfig(endpoints)
	sc := signalCases[0]
	p, _ := sc.create(t, NewFactory(), testSettings(nil), cfg)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = sc.consume(ctx, p, i, 1, 2)
		})
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "batch %d", i)
	}
}

// startBatchingSidecar serves endpoint with serveRawFrames: it holds its
// Acks until it has read want frames, then acknowledges all of them at once
// and each later frame on its own.
func startBatchingSidecar(t *testing.T, endpoint string, want uint64) {
	t.Helper()
	serveRawFrames(t, endpoint, func(f *sdp.ResourceFrame) (sdp.Ack, bool) {
		return sdp.Ack{Sequence: f.Sequence, Status: sdp.AckAccepted}, f.Sequence >= want
	})
}
