// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// fakeSidecar answers each frame with answer(name), written as is; it
// counts the frames and connections it saw.
type fakeSidecar struct {
	answer func(name string, seq uint64) []byte

	mu     sync.Mutex
	frames map[string]int
	conns  int
}

func (f *fakeSidecar) serve(t *testing.T, l net.Listener) {
	var wg sync.WaitGroup
	var conns []net.Conn
	var connsMu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			connsMu.Lock()
			conns = append(conns, conn)
			connsMu.Unlock()
			f.mu.Lock()
			f.conns++
			f.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				r := sdp.NewReader(conn, 0)
				if _, _, err := r.Next(); err != nil { // Hello
					return
				}
				var rf sdp.ResourceFrame
				for {
					_, payload, err := r.Next()
					if err != nil || rf.DecodePayload(payload) != nil {
						return
					}
					name := frameName(&rf)
					f.mu.Lock()
					f.frames[name]++
					f.mu.Unlock()
					if _, err := conn.Write(f.answer(name, rf.Sequence)); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		connsMu.Lock()
		for _, c := range conns {
			c.Close()
		}
		connsMu.Unlock()
		wg.Wait()
	})
}

func (f *fakeSidecar) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frames[name]
}

func ackFrame(t *testing.T, a sdp.Ack) []byte {
	b, err := a.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// protocolObserved counts what a ProtocolObserver hears.
type protocolObserved struct {
	observed
	mu                         sync.Mutex
	protocolErrors, failed, fi int
}

func (p *protocolObserved) ProtocolError(uint32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.protocolErrors++
}

func (p *protocolObserved) FramesFailed(_ uint32, frames, items int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failed += frames
	p.fi += items
}

func TestOverLongAckFailsItsFramesWithoutResending(t *testing.T) {
	fake := &fakeSidecar{frames: map[string]int{}}
	fake.answer = func(name string, seq uint64) []byte {
		if name == "poison" {
			return ackFrame(t, sdp.Ack{Sequence: seq, Status: sdp.AckRejected, Detail: strings.Repeat("e", 70_000)})
		}
		return ackFrame(t, sdp.Ack{Sequence: seq})
	}
	l, endpoint := listen(t, "unix")
	fake.serve(t, l)
	obs := &protocolObserved{}
	c := startClient(t, testSettings(t, endpoint, obs))

	set := newSettledSet(3)
	sendRetrying(t, c, []Frame{testFrame(t, "before", 10)}, set.callback(t, 0))
	eventually(t, 5*time.Second, "the first frame", func() bool { return fake.count("before") == 1 })
	sendRetrying(t, c, []Frame{testFrame(t, "poison", 10)}, set.callback(t, 1))
	sendRetrying(t, c, []Frame{testFrame(t, "after", 10)}, set.callback(t, 2))
	errs := set.wait(t, 10*time.Second)
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("good frames settled with %v and %v", errs[0], errs[2])
	}
	err := errs[1]
	if !errors.Is(err, ErrProtocol) || errors.Is(err, ErrRejected) {
		t.Fatalf("the frame answered with an over-long Ack settled with %v, want ErrProtocol", err)
	}
	for _, want := range []string{"70023 bytes", "65536-byte limit for Ack frames"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// Give a resend loop the time to show.
	time.Sleep(200 * time.Millisecond)
	if n := fake.count("poison"); n != 1 {
		t.Errorf("the frame was sent %d times, want once", n)
	}
	obs.mu.Lock()
	if obs.protocolErrors != 1 || obs.failed != 1 || obs.fi != 3 {
		t.Errorf("observer: %d protocol errors, %d frames (%d items) failed; want 1, 1, 3", obs.protocolErrors, obs.failed, obs.fi)
	}
	obs.mu.Unlock()
	if err := shutdownClient(t, c, 5*time.Second); err != nil {
		t.Error(err)
	}
}

// An over-long Ack that arrives while the writer is blocked on a frame the
// sidecar does not read: the reader closes the connection under the writer,
// and the connection must still end as the protocol error it is (reported
// to the observer, backed off), not as the writer's "use of closed network
// connection".
func TestOverLongAckDuringABlockedWriteIsAProtocolError(t *testing.T) {
	bigSent := make(chan struct{})
	fake := &fakeSidecar{frames: map[string]int{}}
	fake.answer = func(name string, seq uint64) []byte {
		if name == "poison" {
			// Not reading now: the big frame fills the socket and the
			// client's writer blocks in its write.
			select {
			case <-bigSent:
			case <-time.After(10 * time.Second):
			}
			time.Sleep(200 * time.Millisecond)
			return ackFrame(t, sdp.Ack{Sequence: seq, Status: sdp.AckRejected, Detail: strings.Repeat("e", 70_000)})
		}
		return ackFrame(t, sdp.Ack{Sequence: seq})
	}
	l, endpoint := listen(t, "unix")
	fake.serve(t, l)
	obs := &protocolObserved{}
	s := testSettings(t, endpoint, obs)
	s.QueueBytes = 16 << 20
	c := startClient(t, s)

	set := newSettledSet(2)
	sendRetrying(t, c, []Frame{testFrame(t, "poison", 10)}, set.callback(t, 0))
	eventually(t, 5*time.Second, "the poison frame", func() bool { return fake.count("poison") == 1 })
	big := testFrame(t, "big", sdp.MaxArrayLen)
	sendRetrying(t, c, []Frame{big, big, big, big}, set.callback(t, 1))
	close(bigSent)
	errs := set.wait(t, 10*time.Second)
	if !errors.Is(errs[0], ErrProtocol) {
		t.Errorf("the frame answered with an over-long Ack settled with %v, want ErrProtocol", errs[0])
	}
	if errs[1] != nil {
		t.Errorf("the big frames, sent again on the next connection, settled with %v", errs[1])
	}
	obs.mu.Lock()
	if obs.protocolErrors != 1 || obs.failed != 1 {
		t.Errorf("observer: %d protocol errors, %d frames failed; want 1 and 1", obs.protocolErrors, obs.failed)
	}
	obs.mu.Unlock()
	if err := shutdownClient(t, c, 5*time.Second); err != nil {
		t.Error(err)
	}
}

func TestNewClientRefusesASenderOverTheHelloLimit(t *testing.T) {
	s := testSettings(t, "unix:///tmp/x.sock", nil)
	s.Sender = strings.Repeat("s", sdp.MaxHelloSenderSize)
	if _, err := NewClient(s); err != nil {
		t.Fatalf("the longest sender: %v", err)
	}
	s.Sender += "s"
	_, err := NewClient(s)
	if err == nil || !strings.Contains(err.Error(), "4096-byte limit for Hello frames") {
		t.Errorf("NewClient with a sender one byte too long: %v", err)
	}
}

func TestIdleCloseIsQuietAndTheClientCarriesOn(t *testing.T) {
	rec := newRecorder(nil)
	l, endpoint := listen(t, "unix")
	// Long enough that a loaded machine still gets the first frame through
	// before the connection idles out.
	srv := &Server{Handler: rec, IdleTimeout: time.Second}
	serve(t, srv, l)
	logger, logs := observeLogs(slog.LevelInfo)
	s := testSettings(t, endpoint, nil)
	s.Logger = logger
	h := &healthy{t: t, c: startClient(t, s), rec: rec}
	h.send("first")
	eventually(t, 10*time.Second, "an idle close", func() bool { return srv.Stats().IdleTimeouts >= 1 })
	// Judged before anything else is sent: an idle close with nothing in
	// flight is logged at info and warns nothing. (A later close could race
	// a frame in flight, which rightly warns.)
	eventually(t, 5*time.Second, "the idle close logged", func() bool {
		return logs.FilterMessageSnippet("nothing in flight").Len() > 0
	})
	if n := logs.FilterLevelExact(slog.LevelWarn).Len(); n != 0 {
		t.Errorf("%d warnings for an idle close: %v", n, logs.FilterLevelExact(slog.LevelWarn).All()[0].Message)
	}
	h.send("second")
	h.check()
}

func TestDialFailuresAreWarnedRateLimited(t *testing.T) {
	logger, logs := observeLogs(slog.LevelDebug)
	s := testSettings(t, "unix://"+t.TempDir()+"/nobody.sock", nil)
	s.Logger = logger
	c := startClient(t, s)
	eventually(t, 5*time.Second, "several dial attempts", func() bool { return logs.FilterMessageSnippet("Cannot connect").Len() >= 5 })
	if err := shutdownClient(t, c, 10*time.Millisecond); err != nil {
		t.Error(err)
	}
	if n := logs.FilterMessageSnippet("Cannot connect").FilterLevelExact(slog.LevelWarn).Len(); n != 1 {
		t.Errorf("%d warnings within the first 10 s of failures, want 1", n)
	}
}
