// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// releases records what ClientSettings.ReleaseFrame was called with.
type releases struct {
	mu     sync.Mutex
	frames map[*byte]int // first byte of each frame -> times released
}

func (r *releases) release(b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.frames == nil {
		r.frames = map[*byte]int{}
	}
	r.frames[&b[0]]++
}

func (r *releases) times(f Frame) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.frames[&f.Bytes[0]]
}

// A frame's bytes are released once, after its sidecar accepted or
// rejected it, and not while it waits to be sent again after a retry Ack.
func TestReleaseFrameAfterTheSidecarAnswered(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			var mu sync.Mutex
			retried := map[string]bool{}
			rec := newRecorder(func(name string) (sdp.AckStatus, string) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case strings.HasPrefix(name, "bad"):
					return sdp.AckRejected, "no"
				case strings.HasPrefix(name, "slow") && !retried[name]:
					retried[name] = true
					return sdp.AckRetry, "later"
				}
				return sdp.AckAccepted, ""
			})
			l, endpoint := listen(t, network)
			serve(t, &Server{Handler: rec}, l)
			var rel releases
			s := testSettings(t, endpoint, nil)
			s.ReleaseFrame = rel.release
			c := startClient(t, s)

			frames := []Frame{testFrame(t, "good0", 100), testFrame(t, "bad0", 100), testFrame(t, "slow0", 100), testFrame(t, "good1", 100)}
			set := newSettledSet(len(frames))
			for i, f := range frames {
				sendRetrying(t, c, []Frame{f}, set.callback(t, i))
			}
			set.wait(t, 10*time.Second)
			if err := shutdownClient(t, c, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			for _, f := range frames {
				if n := rel.times(f); n != 1 {
					t.Errorf("frame %q released %d times, want once", f.Bytes[sdp.ResourceHeaderSize:sdp.ResourceHeaderSize+5], n)
				}
			}
			if n := rec.count("slow0"); n != 2 {
				t.Errorf("slow0 received %d times, want 2 (retry, then accepted)", n)
			}
		})
	}
}

// Frames the client gives up on are never released: nobody can tell that
// no write still reads them.
func TestReleaseFrameNotCalledForUndeliveredFrames(t *testing.T) {
	l, endpoint := listen(t, "unix")
	l.Close() // nothing listens: every dial fails
	var rel releases
	s := testSettings(t, endpoint, nil)
	s.ReleaseFrame = rel.release
	c := startClient(t, s)
	f := testFrame(t, "lost", 100)
	settled := make(chan error, 1)
	if err := c.Send([]Frame{f}, func(err error) { settled <- err }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_ = c.Shutdown(ctx)
	select {
	case err := <-settled:
		if err == nil {
			t.Fatal("an undelivered frame settled without error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the undelivered frame never settled")
	}
	if n := rel.times(f); n != 0 {
		t.Fatalf("an undelivered frame was released %d times", n)
	}
}

// A sidecar that answers a frame before it has read all of it (broken or
// hostile) does not get the frame released while the write that sends it
// is still reading its bytes: whatever the pool's next user writes there
// must never reach the wire. The frame is released once the write
// returned.
func TestReleaseFrameWaitsForTheWriteToReturn(t *testing.T) {
	l, endpoint := listen(t, "unix")
	defer l.Close()
	overwritten := make(chan int, 1)
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		var hdr [sdp.HeaderSize]byte
		read := func() sdp.Header {
			_, _ = io.ReadFull(conn, hdr[:])
			h, _ := sdp.ParseHeader(hdr[:])
			return h
		}
		_, _ = io.CopyN(io.Discard, conn, int64(read().Length)) // the Hello
		h := read()
		ack, _ := (&sdp.Ack{Sequence: 1, Status: sdp.AckAccepted}).AppendFrame(nil)
		_, _ = conn.Write(ack) // after 10 bytes of a frame of megabytes
		time.Sleep(200 * time.Millisecond)
		rest := make([]byte, h.Length)
		_, _ = io.ReadFull(conn, rest)
		overwritten <- bytes.Count(rest, []byte{0xaa})
	}()
	var released atomic.Int32
	s := testSettings(t, endpoint, nil)
	s.QueueBytes = 16 << 20
	s.WriteTimeout = 10 * time.Second
	s.ReleaseFrame = func(b []byte) {
		released.Add(1)
		for i := range b {
			b[i] = 0xaa // what the pool's next user does
		}
	}
	c := startClient(t, s)
	defer c.CloseAndTake()
	if err := c.Send([]Frame{testFrame(t, "big", sdp.MaxArrayLen)}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-overwritten:
		if n > 0 {
			t.Fatalf("%d bytes of the frame were overwritten after ReleaseFrame while still being written (released %d times)", n, released.Load())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sidecar never read the frame")
	}
	// Released once the write returned, not before and not twice.
	eventually(t, 5*time.Second, "the frame's release after its write", func() bool { return released.Load() >= 1 })
	if n := released.Load(); n != 1 {
		t.Fatalf("the frame was released %d times, want once", n)
	}
}
