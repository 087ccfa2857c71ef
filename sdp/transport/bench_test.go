// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// BenchmarkClientToServer measures frames sent, acknowledged and settled
// end to end over a real socket, 64 frames per Send, and 5 per Send from 4
// goroutines: the shape of one shard's part of the end-to-end benchmark's
// requests (10 resources over 2 shards, 4 clients). cpu-ns/frame is the
// process's CPU time (client and server together) per frame.
func BenchmarkClientToServer(b *testing.B) {
	for _, network := range networks {
		for _, size := range []int{256, 16 << 10} {
			b.Run(fmt.Sprintf("%s/%dB", network, size), func(b *testing.B) {
				benchTransport(b, network, size, 64, 1)
			})
		}
		b.Run(fmt.Sprintf("%s/1KiBx5x4", network), func(b *testing.B) {
			benchTransport(b, network, 1<<10, 5, 4)
		})
	}
}

// processCPU returns the CPU time (user and system) the process used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchTransport(b *testing.B, network string, size, perSend, senders int) {
	l, endpoint := listen(b, network)
	srv := &Server{Handler: HandlerFunc(func(*sdp.Hello, *sdp.ResourceFrame) (sdp.AckStatus, string) {
		return sdp.AckAccepted, ""
	})}
	go srv.Serve(l)
	defer srv.Shutdown(b.Context())
	c, err := NewClient(ClientSettings{Endpoint: endpoint, Shard: 1, ShardCount: 4, QueueBytes: 32 << 20, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	c.Start()
	defer c.Shutdown(b.Context())

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
	cpu := processCPU(b)
	var next atomic.Int64
	var senderWG sync.WaitGroup
	for range senders {
		senderWG.Add(1)
		go func() {
			defer senderWG.Done()
			for next.Add(1) <= int64(b.N) {
				frames := pool.Get().([]Frame)
				wg.Add(1)
				for {
					err := c.Send(frames, func(error) { pool.Put(frames); wg.Done() })
					if err == nil {
						break
					}
					if err != ErrQueueFull {
						b.Error(err)
						wg.Done()
						return
					}
					time.Sleep(50 * time.Microsecond)
				}
			}
		}()
	}
	senderWG.Wait()
	wg.Wait()
	b.ReportMetric(float64(b.N*perSend)/b.Elapsed().Seconds(), "frames/s")
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N*perSend), "cpu-ns/frame")
}

// BenchmarkServerReadFrames measures the Server alone: a plain unix socket
// connection writes pre-encoded ResourceFrames, 64 per write, while another
// goroutine reads the Acks, against a Handler that only accepts. There is
// no Client, so ns/frame and cpu-ns/frame are the Server's own cost (plus
// one write per 64 frames and the Ack reads). 11KiB is the size of the
// end-to-end benchmark's trace frames; 512KiB frames, 4 per write, take the
// read-budget path.
func BenchmarkServerReadFrames(b *testing.B) {
	for _, size := range []int{256, 11 << 10, 512 << 10} {
		perWrite := 64
		if size > FreeFrameBytes {
			perWrite = 4
		}
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			benchServerFrames(b, size, perWrite)
		})
	}
}

func benchServerFrames(b *testing.B, size, perWrite int) {
	l, endpoint := listen(b, "unix")
	srv := &Server{Handler: HandlerFunc(func(*sdp.Hello, *sdp.ResourceFrame) (sdp.AckStatus, string) {
		return sdp.AckAccepted, ""
	})}
	go srv.Serve(l)
	defer srv.Shutdown(b.Context())
	network, address, err := ParseEndpoint(endpoint)
	if err != nil {
		b.Fatal(err)
	}
	conn, err := net.Dial(network, address)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	hello, err := (&sdp.Hello{ProtocolVersion: sdp.ProtocolVersion, Sender: "bench", Shard: 1, ShardCount: 4}).AppendFrame(nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Write(hello); err != nil {
		b.Fatal(err)
	}
	frame := testFrame(b, "bench", size).Bytes
	var batch []byte
	for range perWrite {
		batch = append(batch, frame...)
	}
	frames := b.N * perWrite

	acked := make(chan error, 1)
	go func() {
		r := sdp.NewReader(bufio.NewReader(conn), sdp.DefaultMaxFrameSize)
		var ack sdp.Ack
		for {
			_, payload, err := r.Next()
			if err == nil {
				err = ack.DecodePayload(payload)
			}
			if err == nil && ack.Status != sdp.AckAccepted {
				err = fmt.Errorf("frame %d answered %s", ack.Sequence, ack.Status)
			}
			if err != nil || ack.Sequence == uint64(frames) {
				acked <- err
				return
			}
		}
	}()
	b.SetBytes(int64(perWrite * len(frame)))
	b.ResetTimer()
	cpu := processCPU(b)
	seq := uint64(0)
	for range b.N {
		for off := 0; off < len(batch); off += len(frame) {
			seq++
			if err := sdp.SetSequence(batch[off:], seq); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := conn.Write(batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-acked; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(frames), "cpu-ns/frame")
}
