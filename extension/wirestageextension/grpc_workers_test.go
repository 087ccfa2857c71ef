// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// serverWorker is the function grpc-go's stream workers run in.
const serverWorker = "grpc.(*Server).serverWorker"

// goroutinesIn counts the goroutines whose stack has fn in it.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(fn)) {
			count++
		}
	}
	return count
}

// With grpc_stream_workers the receiver's gRPC server keeps that many
// goroutines and runs the stages of a request on one of them; with 0 it
// keeps none and every request has a goroutine of its own.
func TestGRPCStreamWorkersRunTheStages(t *testing.T) {
	for _, workers := range []int{0, 3} {
		cfg := divertConfig()
		cfg.GRPCStreamWorkers = workers
		r := newRig(t, cfg)
		onWorker := make(chan bool, 1)
		register(t, r, stageID, StageFunc(func(context.Context, otlpwire.Request) (Result, error) {
			buf := make([]byte, 64<<10)
			onWorker <- bytes.Contains(buf[:runtime.Stack(buf, false)], []byte(serverWorker))
			return Result{}, nil
		}), true)
		before := goroutinesIn(serverWorker)
		r.startReceiver()
		// The server starts its workers when it is built; they may not have
		// run yet.
		require.Eventually(t, func() bool { return goroutinesIn(serverWorker) == before+workers }, 5*time.Second, time.Millisecond,
			"grpc_stream_workers %d: idle workers", workers)

		_, err := r.grpcClient().Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces(1, "a")))
		require.NoError(t, err)
		assert.Equal(t, workers > 0, <-onWorker, "grpc_stream_workers %d: the stage ran on a stream worker", workers)
		assert.Equal(t, 1, r.sink.SpanCount(), "grpc_stream_workers %d", workers)
	}
}
