// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// writes is an Observer that records the frames of each write.
type writes struct {
	nopObserver
	mu     sync.Mutex
	frames []int
}

func (w *writes) FramesSent(_ uint32, s Sent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.frames = append(w.frames, s.Frames)
}

func (w *writes) snapshot() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.frames)
}

// lingerClient starts a client with linger and batchBytes against a server
// that accepts everything.
func lingerClient(t *testing.T, linger time.Duration, batchBytes int) (*Client, *recorder, *writes) {
	t.Helper()
	l, endpoint := listen(t, "unix")
	rec := newRecorder(nil)
	serve(t, &Server{Handler: rec}, l)
	w := &writes{}
	s := testSettings(t, endpoint, w)
	s.Linger, s.BatchBytes = linger, batchBytes
	c := startClient(t, s)
	t.Cleanup(func() { _ = shutdownClient(t, c, 5*time.Second) })
	return c, rec, w
}

// Frames of separate Sends wait out the linger of the oldest and go out in
// one write, not before.
func TestLingerSendsFramesTogether(t *testing.T) {
	const linger = 300 * time.Millisecond
	c, rec, w := lingerClient(t, linger, 0)
	set := newSettledSet(5)
	start := time.Now()
	for i := range 5 {
		sendRetrying(t, c, []Frame{testFrame(t, fmt.Sprintf("f%d", i), 100)}, set.callback(t, i))
	}
	time.Sleep(linger / 3)
	if n := rec.count("f0"); n != 0 && time.Since(start) < linger {
		t.Fatalf("the sidecar had a frame %v after the first Send, before the %v linger", time.Since(start), linger)
	}
	for i, err := range set.wait(t, 5*time.Second) {
		if err != nil {
			t.Errorf("frame %d settled with %v", i, err)
		}
	}
	if d := time.Since(start); d < linger {
		t.Errorf("frames settled %v after the first Send, within the %v linger", d, linger)
	}
	// The Ack can settle the frames before the writer reports its write.
	eventually(t, 5*time.Second, "the write to be reported", func() bool { return len(w.snapshot()) > 0 })
	if got := w.snapshot(); !slices.Equal(got, []int{5}) {
		t.Errorf("writes carried %v frames, want one write of 5", got)
	}
}

// Frames that add up to BatchBytes are written at once, without waiting for
// the linger.
func TestLingerWritesEarlyAtBatchBytes(t *testing.T) {
	frame := testFrame(t, "x", 1000)
	c, _, w := lingerClient(t, time.Hour, 3*len(frame.Bytes))
	set := newSettledSet(3)
	for i := range 3 {
		sendRetrying(t, c, []Frame{testFrame(t, fmt.Sprintf("b%d", i), 1000)}, set.callback(t, i))
	}
	set.wait(t, 5*time.Second)
	eventually(t, 5*time.Second, "the write to be reported", func() bool { return len(w.snapshot()) > 0 })
	if got := w.snapshot(); !slices.Equal(got, []int{3}) {
		t.Errorf("writes carried %v frames, want one write of 3", got)
	}
}

// Shutdown and Flush do not wait for the linger.
func TestLingerEndsAtShutdownAndFlush(t *testing.T) {
	t.Run("shutdown", func(t *testing.T) {
		c, rec, _ := lingerClient(t, time.Hour, 0)
		sendRetrying(t, c, []Frame{testFrame(t, "s", 100)}, nil)
		start := time.Now()
		if err := shutdownClient(t, c, 5*time.Second); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Shutdown took %v with a lingering frame", d)
		}
		if n := rec.count("s"); n != 1 {
			t.Errorf("the sidecar received the frame %d times, want 1", n)
		}
	})
	t.Run("flush", func(t *testing.T) {
		c, _, w := lingerClient(t, time.Hour, 0)
		done := make(chan error, 1)
		sendRetrying(t, c, []Frame{testFrame(t, "f", 100)}, func(err error) { done <- err })
		c.Flush()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a flushed frame was not acknowledged within 5s")
		}
		eventually(t, 5*time.Second, "the write to be reported", func() bool { return len(w.snapshot()) > 0 })
		// Frames queued after the Flush linger again.
		sendRetrying(t, c, []Frame{testFrame(t, "g", 100)}, nil)
		time.Sleep(100 * time.Millisecond)
		if got := w.snapshot(); !slices.Equal(got, []int{1}) {
			t.Errorf("writes carried %v frames, want the flushed one only", got)
		}
	})
}

// With no linger every frame is written as soon as the writer is free: a
// Send waited for one at a time settles at once, each in its own write.
func TestZeroLingerWritesAtOnce(t *testing.T) {
	c, _, w := lingerClient(t, 0, 0)
	start := time.Now()
	for i := range 20 {
		done := make(chan error, 1)
		sendRetrying(t, c, []Frame{testFrame(t, fmt.Sprintf("z%d", i), 100)}, func(err error) { done <- err })
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("20 frames sent one at a time took %v", d)
	}
	eventually(t, 5*time.Second, "the writes to be reported", func() bool { return len(w.snapshot()) >= 20 })
	if got := w.snapshot(); len(got) != 20 {
		t.Errorf("%d writes for 20 frames sent one at a time, want 20", len(got))
	}
}

// A member that has stopped (a process stopped with SIGSTOP: its socket
// accepts connections into the backlog and never reads; or one with no
// listener at all) holds at most QueueBytes of lingering frames: Sends are
// refused once the queue is full, and the memory of the frames refused is
// not kept.
func TestLingerQueueBoundForStoppedMember(t *testing.T) {
	for _, kind := range []string{"stopped", "gone"} {
		t.Run(kind, func(t *testing.T) {
			l, endpoint := listen(t, "unix")
			if kind == "gone" {
				l.Close()
			} else {
				t.Cleanup(func() { l.Close() }) // never accepted
			}
			s := testSettings(t, endpoint, nil)
			s.QueueBytes = 1 << 20
			s.Linger = time.Hour
			s.WriteTimeout = 100 * time.Millisecond
			s.AckTimeout = 200 * time.Millisecond
			c := startClient(t, s)

			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			refused := 0
			for i := range 2000 { // 32 MiB offered to a 1 MiB queue
				err := c.Send([]Frame{testFrame(t, fmt.Sprintf("m%d", i), 16<<10)}, nil)
				switch {
				case errors.Is(err, ErrQueueFull):
					refused++
				case err != nil:
					t.Fatal(err)
				}
				if q := c.QueuedBytes(); q > s.QueueBytes {
					t.Fatalf("QueuedBytes %d over QueueBytes %d", q, s.QueueBytes)
				}
				if i%200 == 0 {
					time.Sleep(5 * time.Millisecond) // let connections come and go
				}
			}
			var after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&after)
			if refused < 1900 {
				t.Errorf("%d of 2000 Sends refused, want at least 1900 (the queue holds 1 MiB)", refused)
			}
			if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > int64(s.QueueBytes)+512<<10 {
				t.Errorf("the heap grew by %d bytes, over QueueBytes %d and 512 KiB", grew, s.QueueBytes)
			}
			runtime.KeepAlive(c)
			err := shutdownClient(t, c, 300*time.Millisecond)
			if !errors.Is(err, ErrUndelivered) {
				t.Errorf("Shutdown: %v, want ErrUndelivered", err)
			}
		})
	}
}

// A Send refused for a full queue makes the lingering frames due: the
// queue is not held full for the rest of a linger.
func TestLingerFullQueueWritesAtOnce(t *testing.T) {
	l, endpoint := listen(t, "unix")
	serve(t, &Server{Handler: newRecorder(nil)}, l)
	s := testSettings(t, endpoint, nil)
	s.QueueBytes = 64 << 10
	s.BatchBytes = 1 << 20 // capped at half the queue
	s.Linger = time.Hour
	c := startClient(t, s)
	t.Cleanup(func() { _ = shutdownClient(t, c, 5*time.Second) })
	frame := testFrame(t, "q", 8<<10)
	// Below half the queue: lingering.
	sendRetrying(t, c, []Frame{testFrame(t, "q0", 8<<10), testFrame(t, "q1", 8<<10)}, nil)
	if err := c.Send([]Frame{testFrame(t, "q2", 60<<10)}, nil); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("Send over the queue: %v, want ErrQueueFull", err)
	}
	eventually(t, 5*time.Second, "the refused Send to flush the lingering frames", func() bool { return c.QueuedBytes() == 0 })
	// Half the queue (the cap on BatchBytes) is written at once.
	sendRetrying(t, c, []Frame{frame, testFrame(t, "q3", 8<<10), testFrame(t, "q4", 8<<10), testFrame(t, "q5", 8<<10)}, nil)
	eventually(t, 5*time.Second, "half a queue to be written at once", func() bool { return c.QueuedBytes() == 0 })
}
