// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// BenchmarkLingerFleet measures what batching across Sends saves when
// requests are spread over a fleet: each request is 10 frames of 2.5 KiB
// (the end-to-end benchmark's 10 resources of 10 small spans), frame i
// going to member i mod members, sent by 4 goroutines at 500 requests a
// second each without waiting for the Acks (the shape of wait_for_ack:
// false at a steady load below saturation: a saturated writer batches by
// itself, as the pending frames pile up while it writes). Every member is
// a Client and a Server in this process, over unix sockets.
//
// writes/frame is the client writes (each one a wake-up of the member's
// server) per frame, from the Observer's FramesSent; cpu-ns/frame the
// process's CPU time, clients and servers together, per frame; latency-us
// the mean time from Send to settled.
func BenchmarkLingerFleet(b *testing.B) {
	for _, members := range []int{2, 16} {
		for _, linger := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond} {
			b.Run(fmt.Sprintf("members=%d/linger=%v", members, linger), func(b *testing.B) {
				benchLingerFleet(b, members, linger)
			})
		}
	}
}

// countWrites is an Observer that counts writes and the frames in them.
type countWrites struct {
	nopObserver
	writes, frames atomic.Int64
}

func (c *countWrites) FramesSent(_ uint32, s Sent) {
	c.writes.Add(1)
	c.frames.Add(int64(s.Frames))
}

func benchLingerFleet(b *testing.B, members int, linger time.Duration) {
	const (
		perRequest = 10
		frameBytes = 2500
		senders    = 4
		interval   = 2 * time.Millisecond // per sender
	)
	obs := &countWrites{}
	template := testFrame(b, "bench", frameBytes).Bytes
	buffers := sync.Pool{New: func() any { return make([]byte, len(template)) }}
	clients := make([]*Client, members)
	for i := range clients {
		l, endpoint := listen(b, "unix")
		srv := &Server{Handler: HandlerFunc(func(*sdp.Hello, *sdp.ResourceFrame) (sdp.AckStatus, string) {
			return sdp.AckAccepted, ""
		})}
		go srv.Serve(l)
		defer srv.Shutdown(b.Context())
		c, err := NewClient(ClientSettings{
			Endpoint: endpoint, Shard: 0, ShardCount: 1, QueueBytes: 8 << 20, Linger: linger,
			Logger: slog.New(slog.DiscardHandler), Observer: obs,
			ReleaseFrame: func(f []byte) { buffers.Put(f[:cap(f)]) }, //nolint:staticcheck // a slice, as Get returns it
		})
		if err != nil {
			b.Fatal(err)
		}
		c.Start()
		defer c.Shutdown(b.Context())
		clients[i] = c
	}
	var unsettled sync.WaitGroup
	var latency atomic.Int64
	frameFor := func() Frame {
		buf := buffers.Get().([]byte)
		copy(buf, template)
		return Frame{Bytes: buf, Items: 10}
	}
	b.ResetTimer()
	cpu := processCPU(b)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			due := time.Now()
			for next.Add(1) <= int64(b.N) {
				due = due.Add(interval)
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				}
				start := time.Now()
				var left atomic.Int32
				left.Store(perRequest)
				unsettled.Add(1)
				settled := func(error) {
					if left.Add(-1) == 0 {
						latency.Add(int64(time.Since(start)))
						unsettled.Done()
					}
				}
				for i := range perRequest {
					c := clients[i%members]
					for {
						err := c.Send([]Frame{frameFor()}, settled)
						if err == nil {
							break
						}
						if err != ErrQueueFull {
							b.Error(err)
							return
						}
						time.Sleep(50 * time.Microsecond)
					}
				}
			}
		})
	}
	wg.Wait()
	unsettled.Wait()
	frames := float64(b.N * perRequest)
	b.ReportMetric(float64(processCPU(b)-cpu)/frames, "cpu-ns/frame")
	b.ReportMetric(float64(obs.writes.Load())/float64(obs.frames.Load()), "writes/frame")
	b.ReportMetric(float64(latency.Load())/float64(b.N)/1e3, "latency-us")
}
