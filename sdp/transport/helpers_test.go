// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// networks are the two endpoint kinds every end-to-end test runs on.
var networks = []string{"unix", "tcp"}

// listen returns a listener on a fresh endpoint of network and the endpoint
// a client dials.
func listen(t testing.TB, network string) (net.Listener, string) {
	t.Helper()
	endpoint := "tcp://127.0.0.1:0"
	if network == "unix" {
		endpoint = "unix://" + filepath.Join(t.TempDir(), "s.sock")
	}
	l, err := Listen(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if network == "tcp" {
		endpoint = "tcp://" + l.Addr().String()
	}
	return l, endpoint
}

// serve runs srv on l until the test ends.
func serve(t *testing.T, srv *Server, l net.Listener) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("server Shutdown: %v", err)
		}
		if err := <-done; err != ErrServerClosed {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
}

// testFrame encodes a ResourceFrame whose OTLP names it, padded to pad
// bytes.
func testFrame(t testing.TB, name string, pad int) Frame {
	t.Helper()
	otlp := make([]byte, max(pad, len(name)))
	copy(otlp, name)
	f := sdp.ResourceFrame{Signal: 1, Shard: 1, ResourceHash: 42, ItemCount: 3, OTLP: otlp}
	b, err := f.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	return Frame{Bytes: b, Items: 3}
}

// frameName recovers testFrame's name.
func frameName(f *sdp.ResourceFrame) string {
	n := 0
	for n < len(f.OTLP) && f.OTLP[n] != 0 {
		n++
	}
	return string(f.OTLP[:n])
}

// recorder is a Handler that records frames and answers with status(name).
type recorder struct {
	status func(name string) (sdp.AckStatus, string)

	mu     sync.Mutex
	hellos []sdp.Hello
	seqs   map[string][]uint64 // per Hello index: sequences seen, in order
	names  map[string]int      // frame name -> times received
	conns  map[*sdp.Hello]int
	order  []string
}

func newRecorder(status func(string) (sdp.AckStatus, string)) *recorder {
	return &recorder{status: status, names: map[string]int{}, conns: map[*sdp.Hello]int{}}
}

func (r *recorder) HandleFrame(hello *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string) {
	name := frameName(f)
	r.mu.Lock()
	idx, ok := r.conns[hello]
	if !ok {
		idx = len(r.hellos)
		r.conns[hello] = idx
		r.hellos = append(r.hellos, *hello)
		if r.seqs == nil {
			r.seqs = map[string][]uint64{}
		}
	}
	key := fmt.Sprint(idx)
	r.seqs[key] = append(r.seqs[key], f.Sequence)
	r.names[name]++
	r.order = append(r.order, name)
	r.mu.Unlock()
	if r.status == nil {
		return sdp.AckAccepted, ""
	}
	return r.status(name)
}

func (r *recorder) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.names[name]
}

// counts is what a Client reported to an observed.
type counts struct {
	sent, retransmitted  int
	acks                 map[sdp.AckStatus]int // frames per status
	connects, reconnects int
	disconnects          int // failed attempts and lost connections
	undeliveredFrames    int
	undeliveredItems     int
}

// observed is an Observer that counts.
type observed struct {
	mu sync.Mutex
	c  counts
}

func (o *observed) FramesSent(_ uint32, s Sent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.c.sent += s.Frames
	o.c.retransmitted += s.Retransmissions
}

func (o *observed) AckReceived(_ uint32, status sdp.AckStatus, frames int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.c.acks == nil {
		o.c.acks = map[sdp.AckStatus]int{}
	}
	o.c.acks[status] += frames
}

func (o *observed) Connected(_ uint32, reconnect bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if reconnect {
		o.c.reconnects++
	} else {
		o.c.connects++
	}
}

func (o *observed) Disconnected(_ uint32, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		o.c.disconnects++
	}
}

func (o *observed) Undelivered(_ uint32, frames, items int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.c.undeliveredFrames += frames
	o.c.undeliveredItems += items
}

func (o *observed) snapshot() counts {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.c
	c.acks = map[sdp.AckStatus]int{}
	for k, v := range o.c.acks {
		c.acks[k] = v
	}
	return c
}

// testSettings are client settings with short timings for tests.
func testSettings(t *testing.T, endpoint string, obs Observer) ClientSettings {
	return ClientSettings{
		Endpoint:       endpoint,
		Sender:         "test/" + t.Name(),
		Shard:          1,
		ShardCount:     4,
		QueueBytes:     1 << 20,
		DialTimeout:    time.Second,
		InitialBackoff: 5 * time.Millisecond,
		MaxBackoff:     50 * time.Millisecond,
		WriteTimeout:   time.Second,
		AckTimeout:     5 * time.Second,
		Logger:         testLogger(t, slog.LevelWarn),
		Observer:       obs,
	}
}

func startClient(t *testing.T, s ClientSettings) *Client {
	t.Helper()
	c, err := NewClient(s)
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	return c
}

// settledSet collects settled callbacks.
type settledSet struct {
	mu   sync.Mutex
	errs map[int]error
	all  chan struct{}
	want int
}

func newSettledSet(want int) *settledSet {
	return &settledSet{errs: map[int]error{}, all: make(chan struct{}), want: want}
}

func (s *settledSet) callback(t *testing.T, i int) func(error) {
	return func(err error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, dup := s.errs[i]; dup {
			t.Errorf("settled called twice for batch %d", i)
			return
		}
		s.errs[i] = err
		if len(s.errs) == s.want {
			close(s.all)
		}
	}
}

func (s *settledSet) wait(t *testing.T, d time.Duration) map[int]error {
	t.Helper()
	select {
	case <-s.all:
	case <-time.After(d):
		s.mu.Lock()
		n := len(s.errs)
		s.mu.Unlock()
		t.Fatalf("only %d of %d batches settled within %v", n, s.want, d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs
}

// sendRetrying sends frames, waiting while the queue is full.
func sendRetrying(t *testing.T, c *Client, frames []Frame, settled func(error)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.Send(frames, settled)
		if err == nil {
			return
		}
		if err != ErrQueueFull || time.Now().After(deadline) {
			t.Fatalf("Send: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
}

func shutdownClient(t *testing.T, c *Client, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return c.Shutdown(ctx)
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// dropConnections closes every connection accepted on l, before any Ack,
// until the test ends; l keeps its address taken.
func dropConnections(t *testing.T, l net.Listener) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
}
