package transport

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// BenchmarkClientToServer measures frames sent, acknowledged and settled
// end to end over a real socket, 64 frames per Send.
func BenchmarkClientToServer(b *testing.B) {
	for _, network := range networks {
		for _, size := range []int{256, 16 << 10} {
			b.Run(fmt.Sprintf("%s/%dB", network, size), func(b *testing.B) {
				benchTransport(b, network, size)
			})
		}
	}
}

func benchTransport(b *testing.B, network string, size int) {
	l, endpoint := listen(b, network)
	srv := &Server{Handler: HandlerFunc(func(*sdp.Hello, *sdp.ResourceFrame) (sdp.AckStatus, string) {
		return sdp.AckAccepted, ""
	})}
	go srv.Serve(l)
	defer srv.Shutdown(b.Context())
	c, err := NewClient(ClientSettings{Endpoint: endpoint, Shard: 1, ShardCount: 4, QueueBytes: 32 << 20, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	c.Start()
	defer c.Shutdown(b.Context())

	const perSend = 64
	// Frames are owned by the client until settled, so each Send gets
	// fresh ones from a pool refilled by the settled callback.
	pool := sync.Pool{New: func() any {
		frames := make([]Frame, perSend)
		for i := range frames {
			frames[i] = testFrame(b, "bench", size)
		}
		return frames
	}}
	var wg sync.WaitGroup
	b.SetBytes(int64(perSend * size))
	b.ResetTimer()
	for range b.N {
		frames := pool.Get().([]Frame)
		wg.Add(1)
		for {
			err := c.Send(frames, func(error) { pool.Put(frames); wg.Done() })
			if err == nil {
				break
			}
			if err != ErrQueueFull {
				b.Fatal(err)
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	wg.Wait()
	b.ReportMetric(float64(b.N*perSend)/b.Elapsed().Seconds(), "frames/s")
}
