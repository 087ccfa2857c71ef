// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// Unanswered is what a fleet ejects a member on. A sidecar that accepts
// connections but never answers (a stopped process) must age it steadily,
// across the reconnections that ack timeouts cause.
func TestUnansweredAgesWhileTheSidecarIsSilent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var accepted atomic.Int32
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			conns = append(conns, conn) // held open, never read
			mu.Unlock()
		}
	}()
	defer func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	s := testSettings(t, "unix://"+path, nil)
	s.AckTimeout = 30 * time.Millisecond
	c := startClient(t, s)
	defer func() { _ = shutdownClient(t, c, 10*time.Millisecond) }()

	if d := c.Unanswered(time.Now().Add(time.Hour)); d != 0 {
		t.Fatalf("Unanswered with nothing held = %v, want 0", d)
	}
	before := time.Now()
	if err := c.Send([]Frame{testFrame(t, "a", 10)}, nil); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	if d := c.Unanswered(after); d > after.Sub(before) {
		t.Fatalf("Unanswered right after Send = %v, want at most %v", d, after.Sub(before))
	}
	if d := c.Unanswered(after.Add(time.Hour)); d < time.Hour {
		t.Fatalf("Unanswered an hour on = %v, want at least an hour", d)
	}
	eventually(t, 5*time.Second, "reconnections", func() bool { return accepted.Load() >= 3 })
	// A frame sent while another is held does not make the silence younger.
	if err := c.Send([]Frame{testFrame(t, "b", 10)}, nil); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if d, since := c.Unanswered(now), now.Sub(after); d < since {
		t.Fatalf("Unanswered after reconnections = %v, want at least the %v since the first Send", d, since)
	}
}

// A sidecar that cannot be reached at all ages the same way.
func TestUnansweredAgesWhileUnreachable(t *testing.T) {
	l, endpoint := listen(t, "tcp")
	l.Close() // nothing listens: every dial is refused
	c := startClient(t, testSettings(t, endpoint, nil))
	defer func() { _ = shutdownClient(t, c, 10*time.Millisecond) }()
	sent := time.Now()
	if err := c.Send([]Frame{testFrame(t, "a", 10)}, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if d, since := c.Unanswered(time.Now()), time.Since(sent); d < 100*time.Millisecond || d > since {
		t.Fatalf("Unanswered of an unreachable sidecar = %v, want within [100ms, %v]", d, since)
	}
}

// "Retry later" is an answer: the sidecar is alive and pushing back, which
// is backpressure, not a reason to eject it. Every answer starts the count
// over, and nothing held means zero.
func TestUnansweredStartsOverWithEveryAnswer(t *testing.T) {
	var calls atomic.Int32
	rec := newRecorder(func(string) (sdp.AckStatus, string) {
		time.Sleep(30 * time.Millisecond)
		if calls.Add(1) <= 4 {
			return sdp.AckRetry, "busy"
		}
		return sdp.AckAccepted, ""
	})
	l, endpoint := listen(t, "unix")
	serve(t, &Server{Handler: rec}, l)
	obs := &observed{}
	c := startClient(t, testSettings(t, endpoint, obs))
	defer func() { _ = shutdownClient(t, c, 5*time.Second) }()
	sent := time.Now()
	if err := c.Send([]Frame{testFrame(t, "a", 10)}, nil); err != nil {
		t.Fatal(err)
	}
	// The client reports an Ack once it has handled it: two retry answers,
	// the second at least 60ms after the Send (each answer takes 30ms).
	eventually(t, 5*time.Second, "two retry answers", func() bool { return obs.snapshot().acks[sdp.AckRetry] >= 2 })
	now := time.Now()
	if d, since := c.Unanswered(now), now.Sub(sent); d > since-60*time.Millisecond {
		t.Fatalf("Unanswered after two retry answers = %v, %v after the Send: the answers did not count", d, since)
	}
	eventually(t, 5*time.Second, "the queue to drain", func() bool { return c.QueuedBytes() == 0 })
	if d := c.Unanswered(time.Now().Add(time.Hour)); d != 0 {
		t.Fatalf("Unanswered once drained = %v, want 0", d)
	}
}
