// SPDX-License-Identifier: Apache-2.0

//go:build !race

// The race detector adds its own allocations; the byte counts below only
// hold without it.

package wirestageextension

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// stagedHandler is the extension's HTTP handler with one tee stage
// registered, in front of next.
func stagedHandler(t *testing.T, next http.Handler) (http.Handler, *stageRecorder) {
	t.Helper()
	w, err := newWireStage(settingsFor(t), &Config{Stages: []component.ID{stageID}, RetryAfter: time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, w.Shutdown(context.Background())) })
	stage := &stageRecorder{}
	_, err = w.register(stageID, otlpwire.SignalTraces, stage, false)
	require.NoError(t, err)
	wrap, err := w.GetHTTPHandler(context.Background())
	require.NoError(t, err)
	h, err := wrap(context.Background(), next)
	require.NoError(t, err)
	return h, stage
}

// bytesAllocated returns the bytes f allocates per call, averaged over n.
func bytesAllocated(n int, f func()) uint64 {
	f() // warm the pools
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}

// cutShort is a body that ends before its declared length, as net/http
// reports a client that closes the connection early.
type cutShort struct{ r io.Reader }

func (c *cutShort) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// TestHTTPMemoryFollowsBytesReceived sends requests that declare a
// Content-Length of 16 MiB: memory follows the bytes that arrived.
func TestHTTPMemoryFollowsBytesReceived(t *testing.T) {
	body := marshal(t, traces(2, "a", "b"))
	var decoded int
	h, stage := stagedHandler(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		decoded = len(b)
		rw.WriteHeader(http.StatusOK)
	}))
	lying := func(body io.Reader) func() *httptest.ResponseRecorder {
		return func() *httptest.ResponseRecorder {
			r := httptest.NewRequest(http.MethodPost, pathTraces, body)
			r.Header.Set("Content-Type", protobufContentType)
			r.ContentLength = 16 << 20 // the most the old code pre-allocated
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			return rec
		}
	}

	t.Run("complete body", func(t *testing.T) {
		rec := lying(bytes.NewReader(body))()
		require.Equal(t, http.StatusOK, rec.Code)
		assert.Equal(t, len(body), decoded, "the receiver got the whole request")
		assert.Equal(t, body, stage.seen()[0], "the stage saw the request")
		perRequest := bytesAllocated(50, func() { lying(bytes.NewReader(body))() })
		assert.Less(t, perRequest, uint64(64<<10), "bytes allocated per request declaring 16 MiB")
	})
	t.Run("client stops early", func(t *testing.T) {
		rec := lying(&cutShort{bytes.NewReader(body[:10])})()
		assert.Equal(t, http.StatusBadRequest, rec.Code)
		perRequest := bytesAllocated(50, func() { lying(&cutShort{bytes.NewReader(body[:10])})() })
		assert.Less(t, perRequest, uint64(64<<10), "bytes allocated per request declaring 16 MiB")
	})
}

// TestHTTPOversizedBodyRefused reads a body through the limit confighttp
// puts on it (max_request_body_size): refused with 400, as the receiver
// refuses it, and the buffer stops one step beyond the limit.
func TestHTTPOversizedBodyRefused(t *testing.T) {
	const limit = 3 << 20
	called := false
	h, stage := stagedHandler(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	send := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, pathTraces, io.LimitReader(zeros{}, 64<<20))
		r.Header.Set("Content-Type", protobufContentType)
		r.Body = http.MaxBytesReader(rec, r.Body, limit)
		h.ServeHTTP(rec, r)
		return rec
	}
	rec := send()
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "request body too large")
	assert.False(t, called, "an oversized body reached the receiver")
	assert.Empty(t, stage.seen(), "an oversized body reached the stage")
	// Doubling to 1 MiB, then by a quarter: the copies add up to a few
	// times the limit; reading the whole 64 MiB would be far more.
	assert.Less(t, bytesAllocated(5, func() { send() }), uint64(4*limit))
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestReadStepIsBounded(t *testing.T) {
	assert.Equal(t, minReadStep, readStep(0))
	assert.Equal(t, 64<<10, readStep(64<<10))
	assert.Equal(t, maxReadStep, readStep(maxReadStep))
	assert.Equal(t, maxReadStep, readStep(2<<20))
	assert.Equal(t, 25<<20, readStep(100<<20), "a quarter of what is held beyond 4 MiB")
}

// Reading a large body copies it a bounded number of times over: growing
// by a quarter beyond 1 MiB rather than by 1 MiB keeps a 20 MiB body (the
// receiver's default limit) from being copied about ten times over.
func TestReadBodyCopiesALargeBodyFewTimes(t *testing.T) {
	const size = 20 << 20
	allocated := bytesAllocated(2, func() {
		b, err := readBody(io.LimitReader(zeros{}, size), nil)
		if err != nil || len(b) != size {
			t.Fatalf("read %d bytes: %v", len(b), err)
		}
	})
	assert.Less(t, allocated, uint64(6*size))
}
