// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"testing"
	"time"
)

// Zero durations in ClientSettings take the Default values, which are part
// of the package's stable API: a client left at its defaults must deliver
// (a zero dial, write or ack timeout would fail every attempt), and its
// waits after an Ack asking to retry must start at DefaultInitialBackoff
// and stop growing at DefaultMaxBackoff, each drawn from the upper half.
func TestZeroSettingsTakeTheDefaults(t *testing.T) {
	l, endpoint := listen(t, "unix")
	rec := newRecorder(nil)
	serve(t, &Server{Handler: rec}, l)

	c, err := NewClient(ClientSettings{Endpoint: endpoint, Sender: "defaults", Shard: 1, ShardCount: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if w := c.retryBackoff(0); w < 50*time.Millisecond || w > 100*time.Millisecond {
			t.Fatalf("draw %d: first retry wait %v, want 50ms to 100ms", i, w)
		}
		if w := c.retryBackoff(40); w < 5*time.Second || w > 10*time.Second {
			t.Fatalf("draw %d: retry wait after 40 retries %v, want 5s to 10s", i, w)
		}
	}

	c.Start()
	// Stopped before the server's cleanup, also when the test fails, so
	// that the client does not log into a finished test.
	t.Cleanup(func() { _ = shutdownClient(t, c, 5*time.Second) })
	done := make(chan error, 1)
	sendRetrying(t, c, []Frame{testFrame(t, "defaults", 10)}, func(err error) { done <- err })
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("frame settled with %v, want accepted", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("a client with default settings delivered nothing within 10 s")
	}
	if err := shutdownClient(t, c, 5*time.Second); err != nil {
		t.Error(err)
	}
	if n := rec.count("defaults"); n != 1 {
		t.Errorf("the sidecar received the frame %d times, want 1", n)
	}
}
