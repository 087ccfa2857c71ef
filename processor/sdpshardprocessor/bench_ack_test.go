// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// BenchmarkConsumeTracesToSidecars measures end-to-end throughput of
// ConsumeTraces from concurrent callers to in-process sidecars on unix
// sockets, with the default (wait for acks) and with wait_for_ack: false,
// timed until the sidecars acknowledged everything. Compare the two with
// benchstat, interleaving the runs:
//
//	go test -c -o sdpshard.test ./processor/sdpshardprocessor/
//	for i in $(seq 8); do ./sdpshard.test -test.run '^$' -test.bench ConsumeTracesToSidecars -test.benchmem; done > ack.txt
//	benchstat -col /ack ack.txt
func BenchmarkConsumeTracesToSidecars(b *testing.B) {
	for _, clients := range []int{1, 16} {
		for _, wait := range []bool{true, false} {
			name := fmt.Sprintf("clients=%d/ack=%s", clients, map[bool]string{true: "wait", false: "nowait"}[wait])
			b.Run(name, func(b *testing.B) { benchConsume(b, clients, wait) })
		}
	}
}

func benchConsume(b *testing.B, clients int, waitForAck bool) {
	endpoints := newEndpoints(b, "unix", benchShards)
	accept := transport.HandlerFunc(func(*sdp.Hello, *sdp.ResourceFrame) (sdp.AckStatus, string) {
		return sdp.AckAccepted, ""
	})
	for _, endpoint := range endpoints {
		l, err := transport.Listen(endpoint)
		if err != nil {
			b.Fatal(err)
		}
		srv := &transport.Server{Handler: accept}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(l) }()
		b.Cleanup(func() {
			_ = srv.Shutdown(context.Background())
			<-done
		})
	}
	cfg := testConfig(endpoints)
	cfg.WaitForAck = waitForAck
	p, err := NewFactory().CreateTraces(context.Background(), processorSettings(), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	td := benchTraces()
	b.SetBytes(int64(len(mustMarshalTraces(b, td))))
	b.ReportAllocs()
	if clients == 1 {
		for b.Loop() {
			consumeRetrying(b, p.ConsumeTraces, td)
		}
	} else {
		// RunParallel starts parallelism x GOMAXPROCS goroutines.
		b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				consumeRetrying(b, p.ConsumeTraces, td)
			}
		})
	}
	// Shutdown waits until every queued frame is acknowledged, so both
	// modes are timed until the sidecars have everything: without
	// wait_for_ack, a full queue is not a delivered one.
	if err := p.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// consumeRetrying calls consume until it succeeds, as a client would retry
// a retryable refusal (a full queue without wait_for_ack).
func consumeRetrying(b *testing.B, consume func(context.Context, ptrace.Traces) error, td ptrace.Traces) {
	for {
		err := consume(context.Background(), td)
		if err == nil {
			return
		}
		if !errors.Is(err, transport.ErrQueueFull) {
			b.Error(err)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func mustMarshalTraces(b *testing.B, td ptrace.Traces) []byte {
	buf, err := tracesMarshaler.MarshalTraces(td)
	if err != nil {
		b.Fatal(err)
	}
	return buf
}
