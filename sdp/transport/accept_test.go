// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"
)

// errTooManyFiles stands for an Accept that fails for a while (out of file
// descriptors), an error that is not net.ErrClosed.
var errTooManyFiles = errors.New("accept: too many open files")

// failingListener fails its first fails Accepts, then accepts normally.
type failingListener struct {
	net.Listener
	mu    sync.Mutex
	fails int
}

func (l *failingListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.fails > 0 {
		l.fails--
		l.mu.Unlock()
		return nil, errTooManyFiles
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

// A listener that fails for a while must not end Serve nor make it spin:
// the server waits between attempts, 5 ms at first and twice as long after
// each further failure, says so in a warning, and serves the connections
// that come once Accept works again.
func TestServeWaitsOutFailingAccepts(t *testing.T) {
	logger, logs := observeLogs(slog.LevelWarn)
	l, endpoint := listen(t, "unix")
	fl := &failingListener{Listener: l, fails: 4}
	srv := &Server{Handler: newRecorder(nil), Logger: logger}
	serve(t, srv, fl)

	c := startClient(t, testSettings(t, endpoint, nil))
	// Stopped before the server's cleanup, also when the test fails, so
	// that the client does not log into a finished test.
	t.Cleanup(func() { _ = shutdownClient(t, c, 5*time.Second) })
	done := make(chan error, 1)
	sendRetrying(t, c, []Frame{testFrame(t, "after the failures", 10)}, func(err error) { done <- err })
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("frame settled with %v, want accepted", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the frame was not acknowledged: Serve stopped accepting")
	}
	if err := shutdownClient(t, c, 5*time.Second); err != nil {
		t.Fatal(err)
	}

	warned := logs.FilterMessage("Accepting a sidecar connection failed; retrying").All()
	want := []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}
	if len(warned) != len(want) {
		t.Fatalf("%d warnings about failed Accepts, want %d", len(warned), len(want))
	}
	for i, e := range warned {
		if got := e.ContextMap()["pause"]; got != want[i] {
			t.Errorf("failure %d: pause %v, want %v", i+1, got, want[i])
		}
		if got := e.ContextMap()["error"]; got != errTooManyFiles.Error() {
			t.Errorf("failure %d: error %v, want %q", i+1, got, errTooManyFiles)
		}
	}
}
