// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

func TestHandshakeSequencesAndAcks(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			rec := newRecorder(nil)
			l, endpoint := listen(t, network)
			serve(t, &Server{Handler: rec}, l)
			obs := &observed{}
			c := startClient(t, testSettings(t, endpoint, obs))

			const batches, perBatch = 20, 5
			set := newSettledSet(batches)
			for b := range batches {
				var frames []Frame
				for i := range perBatch {
					frames = append(frames, testFrame(t, fmt.Sprintf("f%d-%d", b, i), 100))
				}
				sendRetrying(t, c, frames, set.callback(t, b))
			}
			for b, err := range set.wait(t, 10*time.Second) {
				if err != nil {
					t.Errorf("batch %d settled with %v", b, err)
				}
			}
			if q := c.QueuedBytes(); q != 0 {
				t.Errorf("QueuedBytes after every Ack = %d, want 0", q)
			}
			if err := shutdownClient(t, c, 5*time.Second); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}

			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.hellos) != 1 {
				t.Fatalf("got %d connections, want 1", len(rec.hellos))
			}
			h := rec.hellos[0]
			want := sdp.Hello{ProtocolVersion: 1, Sender: "test/" + t.Name(), Shard: 1, ShardCount: 4}
			if h != want {
				t.Errorf("Hello = %+v, want %+v", h, want)
			}
			seqs := rec.seqs["0"]
			if len(seqs) != batches*perBatch {
				t.Fatalf("got %d frames, want %d", len(seqs), batches*perBatch)
			}
			for i, s := range seqs {
				if s != uint64(i+1) {
					t.Fatalf("frame %d has sequence %d, want %d", i, s, i+1)
				}
			}
			for i, name := range rec.order {
				if want := fmt.Sprintf("f%d-%d", i/perBatch, i%perBatch); name != want {
					t.Fatalf("frame %d is %s, want %s (Send order)", i, name, want)
				}
			}
			got := obs.snapshot()
			if got.sent != batches*perBatch || got.retransmitted != 0 || got.acks[sdp.AckAccepted] != batches*perBatch || got.connects != 1 || got.reconnects != 0 || got.disconnects != 0 {
				t.Errorf("observer saw %+v", got)
			}
		})
	}
}

func TestRetryStatusSendsAgain(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			var mu sync.Mutex
			refusals := map[string]int{}
			rec := newRecorder(func(name string) (sdp.AckStatus, string) {
				mu.Lock()
				defer mu.Unlock()
				// Every odd frame is refused twice before it is taken.
				if name[len(name)-1]%2 == 1 && refusals[name] < 2 {
					refusals[name]++
					return sdp.AckRetry, "busy"
				}
				return sdp.AckAccepted, ""
			})
			l, endpoint := listen(t, network)
			serve(t, &Server{Handler: rec}, l)
			obs := &observed{}
			c := startClient(t, testSettings(t, endpoint, obs))

			set := newSettledSet(10)
			for i := range 10 {
				sendRetrying(t, c, []Frame{testFrame(t, fmt.Sprintf("r%d", i), 10)}, set.callback(t, i))
			}
			for i, err := range set.wait(t, 10*time.Second) {
				if err != nil {
					t.Errorf("frame %d settled with %v", i, err)
				}
			}
			if err := shutdownClient(t, c, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			for i := range 10 {
				name := fmt.Sprintf("r%d", i)
				want := 1
				if i%2 == 1 {
					want = 3
				}
				if got := rec.count(name); got != want {
					t.Errorf("%s received %d times, want %d", name, got, want)
				}
			}
			if got := obs.snapshot(); got.retransmitted != 10 || got.acks[sdp.AckRetry] < 10 {
				t.Errorf("observer saw %+v; want 10 retransmissions and at least 10 frames asked to retry", got)
			}
		})
	}
}

func TestRejectedFramesAreNotRetried(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			rec := newRecorder(func(name string) (sdp.AckStatus, string) {
				if strings.HasPrefix(name, "bad") {
					return sdp.AckRejected, "schema violation in " + name
				}
				return sdp.AckAccepted, ""
			})
			l, endpoint := listen(t, network)
			serve(t, &Server{Handler: rec}, l)
			obs := &observed{}
			c := startClient(t, testSettings(t, endpoint, obs))

			set := newSettledSet(3)
			sendRetrying(t, c, []Frame{testFrame(t, "good0", 10)}, set.callback(t, 0))
			sendRetrying(t, c, []Frame{testFrame(t, "good1", 10), testFrame(t, "bad1", 10), testFrame(t, "good2", 10)}, set.callback(t, 1))
			sendRetrying(t, c, []Frame{testFrame(t, "good3", 10)}, set.callback(t, 2))
			errs := set.wait(t, 10*time.Second)
			if errs[0] != nil || errs[2] != nil {
				t.Errorf("accepted batches settled with %v, %v", errs[0], errs[2])
			}
			if !errors.Is(errs[1], ErrRejected) || !strings.Contains(errs[1].Error(), "schema violation in bad1") {
				t.Errorf("batch with a rejected frame settled with %v; want ErrRejected with the detail", errs[1])
			}
			if err := shutdownClient(t, c, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			if n := rec.count("bad1"); n != 1 {
				t.Errorf("rejected frame received %d times, want once", n)
			}
			if got := obs.snapshot(); got.acks[sdp.AckRejected] != 1 || got.acks[sdp.AckAccepted] != 4 || got.retransmitted != 0 {
				t.Errorf("observer saw %+v", got)
			}
		})
	}
}

func TestServerRestartDeliversEverything(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			rec := newRecorder(nil)
			l, endpoint := listen(t, network)
			first := &Server{Handler: rec, AckDelay: time.Millisecond}
			firstDone := make(chan error, 1)
			go func() { firstDone <- first.Serve(l) }()

			obs := &observed{}
			c := startClient(t, testSettings(t, endpoint, obs))
			const n = 300
			set := newSettledSet(n)
			for i := range n {
				if i == n/3 {
					// Kill the sidecar mid-stream, then bring a new one up on
					// the same endpoint while the client keeps sending.
					eventually(t, 5*time.Second, "first frames to arrive", func() bool { return rec.count("k0") > 0 })
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					if err := first.Shutdown(ctx); err != nil {
						t.Fatal(err)
					}
					cancel()
					<-firstDone
					l2, err := Listen(endpoint)
					if err != nil {
						t.Fatal(err)
					}
					serve(t, &Server{Handler: rec}, l2)
				}
				sendRetrying(t, c, []Frame{testFrame(t, fmt.Sprintf("k%d", i), 1000)}, set.callback(t, i))
			}
			for i, err := range set.wait(t, 20*time.Second) {
				if err != nil {
					t.Errorf("frame %d settled with %v", i, err)
				}
			}
			if err := shutdownClient(t, c, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if rec.count(fmt.Sprintf("k%d", i)) == 0 {
					t.Errorf("frame k%d never delivered", i)
				}
			}
			rec.mu.Lock()
			for conn, seqs := range rec.seqs {
				for i, s := range seqs {
					if s != uint64(i+1) {
						t.Errorf("connection %s: frame %d has sequence %d", conn, i, s)
						break
					}
				}
			}
			rec.mu.Unlock()
			if got := obs.snapshot(); got.reconnects < 1 || got.disconnects < 1 {
				t.Errorf("observer saw no reconnect or no lost connection: %+v", got)
			}
		})
	}
}

func TestStalledSidecarBoundsTheQueue(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			release := make(chan struct{})
			rec := newRecorder(func(string) (sdp.AckStatus, string) {
				<-release // the sidecar stops reading until released
				return sdp.AckAccepted, ""
			})
			l, endpoint := listen(t, network)
			serve(t, &Server{Handler: rec}, l)
			s := testSettings(t, endpoint, nil)
			s.QueueBytes = 64 << 10
			s.WriteTimeout = 100 * time.Millisecond
			s.AckTimeout = 200 * time.Millisecond
			c := startClient(t, s)

			var sent []string
			full := false
			for i := 0; i < 1000 && !full; i++ {
				name := fmt.Sprintf("s%d", i)
				switch err := c.Send([]Frame{testFrame(t, name, 4000)}, nil); {
				case err == nil:
					sent = append(sent, name)
				case errors.Is(err, ErrQueueFull):
					full = true
				default:
					t.Fatal(err)
				}
				if q := c.QueuedBytes(); q > s.QueueBytes {
					t.Fatalf("QueuedBytes %d over QueueBytes %d", q, s.QueueBytes)
				}
			}
			if !full {
				t.Fatal("Send never returned ErrQueueFull while the sidecar was stalled")
			}
			// Let the write and ack timeouts recycle the connection a few
			// times; the bound holds throughout.
			for range 40 {
				if q := c.QueuedBytes(); q > s.QueueBytes {
					t.Fatalf("QueuedBytes %d over QueueBytes %d", q, s.QueueBytes)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := c.Send([]Frame{testFrame(t, "late", 4000)}, nil); !errors.Is(err, ErrQueueFull) {
				t.Errorf("Send to a stalled sidecar with a full queue: %v, want ErrQueueFull", err)
			}

			close(release)
			eventually(t, 10*time.Second, "the queue to drain", func() bool { return c.QueuedBytes() == 0 })
			if err := shutdownClient(t, c, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			for _, name := range sent {
				if rec.count(name) == 0 {
					t.Errorf("frame %s never delivered", name)
				}
			}
		})
	}
}

func TestAckTimeoutRecyclesConnection(t *testing.T) {
	// A sidecar that reads but answers nothing on its first connection.
	var mu sync.Mutex
	var first *sdp.Hello
	silent := make(chan struct{})
	defer close(silent)
	rec := newRecorder(nil)
	handler := HandlerFunc(func(h *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string) {
		mu.Lock()
		if first == nil {
			first = h
		}
		stall := first == h
		mu.Unlock()
		if stall {
			<-silent
		}
		return rec.HandleFrame(h, f)
	})
	l, endpoint := listen(t, "unix")
	serve(t, &Server{Handler: handler}, l)
	obs := &observed{}
	s := testSettings(t, endpoint, obs)
	s.AckTimeout = 100 * time.Millisecond
	c := startClient(t, s)
	set := newSettledSet(1)
	sendRetrying(t, c, []Frame{testFrame(t, "a", 10)}, set.callback(t, 0))
	if err := set.wait(t, 10*time.Second)[0]; err != nil {
		t.Fatal(err)
	}
	if err := shutdownClient(t, c, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := obs.snapshot(); got.reconnects < 1 || got.retransmitted < 1 {
		t.Errorf("observer saw %+v; want a reconnect and a retransmission", got)
	}
}

func TestShutdownWithDeadEndpointReportsUndelivered(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			l, endpoint := listen(t, network)
			// A sidecar that dies on every connection. Closing the listener
			// instead would free a TCP port that the client keeps dialing
			// and that a test running in parallel may bind and answer on.
			dropConnections(t, l)
			obs := &observed{}
			c := startClient(t, testSettings(t, endpoint, obs))
			set := newSettledSet(2)
			sendRetrying(t, c, []Frame{testFrame(t, "a", 10), testFrame(t, "b", 10)}, set.callback(t, 0))
			sendRetrying(t, c, []Frame{testFrame(t, "c", 10)}, set.callback(t, 1))

			start := time.Now()
			err := shutdownClient(t, c, 200*time.Millisecond)
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("Shutdown took %v with a 200ms deadline", elapsed)
			}
			if !errors.Is(err, ErrUndelivered) || !strings.Contains(err.Error(), "3 frames (9 items") {
				t.Errorf("Shutdown = %v; want ErrUndelivered counting 3 frames and 9 items", err)
			}
			for i, err := range set.wait(t, time.Second) {
				if !errors.Is(err, ErrUndelivered) {
					t.Errorf("batch %d settled with %v, want ErrUndelivered", i, err)
				}
			}
			if got := obs.snapshot(); got.undeliveredFrames != 3 || got.undeliveredItems != 9 {
				t.Errorf("observer saw %+v; want 3 undelivered frames, 9 items", got)
			}
			if err := c.Send([]Frame{testFrame(t, "d", 10)}, nil); !errors.Is(err, ErrClosed) {
				t.Errorf("Send after Shutdown = %v, want ErrClosed", err)
			}
			if err := shutdownClient(t, c, time.Second); err != nil {
				t.Errorf("second Shutdown = %v, want nil", err)
			}
		})
	}
}

func TestShutdownFlushesHeldFrames(t *testing.T) {
	rec := newRecorder(nil)
	l, endpoint := listen(t, "tcp")
	serve(t, &Server{Handler: rec, AckDelay: 5 * time.Millisecond}, l)
	c := startClient(t, testSettings(t, endpoint, nil))
	for i := range 20 {
		sendRetrying(t, c, []Frame{testFrame(t, fmt.Sprintf("f%d", i), 10)}, nil)
	}
	if err := shutdownClient(t, c, 5*time.Second); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for i := range 20 {
		if rec.count(fmt.Sprintf("f%d", i)) != 1 {
			t.Errorf("f%d not delivered exactly once before Shutdown returned", i)
		}
	}
}

func TestShutdownWithoutStart(t *testing.T) {
	c, err := NewClient(testSettings(t, "unix:///nonexistent/s.sock", nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := shutdownClient(t, c, time.Second); err != nil {
		t.Errorf("Shutdown of an idle, never started client = %v", err)
	}
	c, err = NewClient(testSettings(t, "unix:///nonexistent/s.sock", nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send([]Frame{testFrame(t, "a", 1)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := shutdownClient(t, c, time.Second); !errors.Is(err, ErrUndelivered) {
		t.Errorf("Shutdown of a never started client holding a frame = %v, want ErrUndelivered", err)
	}
	c.Start() // after Shutdown: does nothing, starts no goroutine
}

func TestSendValidation(t *testing.T) {
	s := testSettings(t, "tcp://127.0.0.1:1", nil)
	s.QueueBytes = 1000
	c, err := NewClient(s)
	if err != nil {
		t.Fatal(err)
	}
	defer shutdownClient(t, c, time.Second)

	hello, _ := (&sdp.Hello{ProtocolVersion: 1, ShardCount: 1}).AppendFrame(nil)
	frame := testFrame(t, "x", 10)
	for _, tc := range []struct {
		name   string
		frames []Frame
		want   error
	}{
		{"garbage", []Frame{{Bytes: []byte("not a frame at all")}}, ErrInvalidFrame},
		{"hello", []Frame{{Bytes: hello}}, ErrInvalidFrame},
		{"truncated", []Frame{{Bytes: frame.Bytes[:len(frame.Bytes)-1]}}, ErrInvalidFrame},
		{"trailing", []Frame{{Bytes: append(append([]byte(nil), frame.Bytes...), 0)}}, ErrInvalidFrame},
		{"larger than the queue", []Frame{testFrame(t, "big", 1000)}, ErrExceedsQueue},
	} {
		if err := c.Send(tc.frames, nil); !errors.Is(err, tc.want) {
			t.Errorf("%s: Send = %v, want %v", tc.name, err, tc.want)
		}
	}
	if q := c.QueuedBytes(); q != 0 {
		t.Errorf("refused Sends left %d bytes queued", q)
	}
	called := false
	if err := c.Send(nil, func(err error) { called = err == nil }); err != nil || !called {
		t.Errorf("empty Send = %v, settled called with nil: %v", err, called)
	}
	// All or nothing: two frames that fit alone but not together.
	a, b := testFrame(t, "a", 400), testFrame(t, "b", 400)
	if err := c.Send([]Frame{a}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Send([]Frame{b, testFrame(t, "c", 400)}, nil); !errors.Is(err, ErrQueueFull) {
		t.Errorf("Send over the bound = %v, want ErrQueueFull", err)
	}
	if q := c.QueuedBytes(); q != len(a.Bytes) {
		t.Errorf("QueuedBytes = %d, want %d (nothing of the refused Send)", q, len(a.Bytes))
	}
}

func TestNewClientValidation(t *testing.T) {
	good := ClientSettings{Endpoint: "tcp://127.0.0.1:7070", ShardCount: 1}
	if _, err := NewClient(good); err != nil {
		t.Fatalf("NewClient(%+v) = %v", good, err)
	}
	for name, mutate := range map[string]func(*ClientSettings){
		"bad endpoint":     func(s *ClientSettings) { s.Endpoint = "udp://x:1" },
		"port 0":           func(s *ClientSettings) { s.Endpoint = "tcp://127.0.0.1:0" },
		"no shards":        func(s *ClientSettings) { s.ShardCount = 0 },
		"shard too high":   func(s *ClientSettings) { s.Shard = 1 },
		"negative queue":   func(s *ClientSettings) { s.QueueBytes = -1 },
		"negative backoff": func(s *ClientSettings) { s.MaxBackoff = -time.Second },
		"negative linger":  func(s *ClientSettings) { s.Linger = -time.Millisecond },
		"negative batch":   func(s *ClientSettings) { s.BatchBytes = -1 },
	} {
		s := good
		mutate(&s)
		if _, err := NewClient(s); err == nil {
			t.Errorf("%s: NewClient accepted %+v", name, s)
		}
	}
}

func TestQueuedBytesDuringShutdownGivingUp(t *testing.T) {
	// A metrics gauge may read QueuedBytes at any time, also while
	// Shutdown settles what it gives up on.
	l, endpoint := listen(t, "unix")
	l.Close()
	c := startClient(t, testSettings(t, endpoint, nil))
	for i := range 500 {
		sendRetrying(t, c, []Frame{testFrame(t, fmt.Sprintf("u%d", i), 10)}, nil)
	}
	stop := make(chan struct{})
	polled := make(chan int)
	go func() {
		last := -1
		for {
			select {
			case <-stop:
				polled <- last
				return
			default:
				last = c.QueuedBytes()
			}
		}
	}()
	if err := shutdownClient(t, c, 50*time.Millisecond); !errors.Is(err, ErrUndelivered) {
		t.Errorf("Shutdown = %v, want ErrUndelivered", err)
	}
	close(stop)
	<-polled
	if q := c.QueuedBytes(); q != 0 {
		t.Errorf("QueuedBytes after Shutdown settled everything = %d, want 0", q)
	}
}

func TestRetryBackoffStartsOverOnANewConnection(t *testing.T) {
	// A sidecar asked to retry four times, the last time with a long wait,
	// then its connection ended. The next connection must not inherit that
	// wait nor the grown backoff: the frame goes out on it at once, and its
	// first retry waits the initial backoff (attempt 0) again.
	l, endpoint := listen(t, "unix")
	c, err := NewClient(testSettings(t, endpoint, nil))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var attempts []int
	c.retryBackoff = func(retries int) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		attempts = append(attempts, retries)
		if retries == 3 {
			return time.Hour
		}
		return time.Millisecond
	}

	// Connection 1 answers retry four times and closes; connection 2
	// answers retry once, then accepts.
	script := [][]sdp.AckStatus{
		{sdp.AckRetry, sdp.AckRetry, sdp.AckRetry, sdp.AckRetry},
		{sdp.AckRetry, sdp.AckAccepted},
	}
	sidecarDone := make(chan error, 1)
	go func() {
		sidecarDone <- func() error {
			for i, statuses := range script {
				conn, err := l.Accept()
				if err != nil {
					return err
				}
				defer conn.Close()
				r := sdp.NewReader(conn, 1<<20)
				if _, _, err := r.Next(); err != nil {
					return fmt.Errorf("connection %d: reading Hello: %w", i+1, err)
				}
				var f sdp.ResourceFrame
				for _, status := range statuses {
					_, payload, err := r.Next()
					if err != nil {
						return fmt.Errorf("connection %d: reading a frame: %w", i+1, err)
					}
					if err := f.DecodePayload(payload); err != nil {
						return err
					}
					ack := sdp.Ack{Sequence: f.Sequence, Status: status, Detail: "busy"}
					b, err := ack.AppendFrame(nil)
					if err != nil {
						return err
					}
					if _, err := conn.Write(b); err != nil {
						return err
					}
				}
				if i == len(script)-1 {
					// Wait for the client to leave.
					if _, _, err := r.Next(); err == nil {
						return errors.New("unexpected frame after the last Ack")
					}
				}
				conn.Close()
			}
			return nil
		}()
	}()
	t.Cleanup(func() { l.Close() })

	c.Start()
	settled := make(chan error, 1)
	if err := c.Send([]Frame{testFrame(t, "a", 10)}, func(err error) { settled <- err }); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-settled:
		if err != nil {
			t.Fatalf("settled with %v", err)
		}
	case err := <-sidecarDone:
		t.Fatalf("sidecar ended early: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the frame was not accepted on the new connection: it waited out the old connection's retry backoff")
	}
	if err := shutdownClient(t, c, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := <-sidecarDone; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []int{0, 1, 2, 3, 0}; !slices.Equal(attempts, want) {
		t.Errorf("retry backoff attempts %v, want %v", attempts, want)
	}
}
