// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// keyed is testFrame with a routing key.
func keyed(t *testing.T, name string, key uint64) Frame {
	f := testFrame(t, name, 64)
	f.Key = key
	return f
}

func TestCloseAndTakeReturnsHeldFramesForAnotherClient(t *testing.T) {
	// The first sidecar accepts "a" frames and stalls on "b0", so that b0
	// stays in flight and what follows it stays unacknowledged.
	block := make(chan struct{})
	stalled := newRecorder(func(name string) (sdp.AckStatus, string) {
		if name == "b0" {
			<-block
		}
		return sdp.AckAccepted, ""
	})
	l1, endpoint1 := listen(t, "tcp")
	serve(t, &Server{Handler: stalled}, l1)
	t.Cleanup(func() { close(block) })
	first := startClient(t, testSettings(t, endpoint1, nil))

	set := newSettledSet(3)
	sendRetrying(t, first, []Frame{keyed(t, "a0", 10), keyed(t, "a1", 11)}, set.callback(t, 0))
	eventually(t, 5*time.Second, "batch 0 to settle", func() bool {
		set.mu.Lock()
		defer set.mu.Unlock()
		return len(set.errs) == 1
	})
	// Batch 1 may be settled in part (a2) before the take: whether the
	// sidecar acknowledged a2 before stalling on b0 is up to its Ack batching.
	sendRetrying(t, first, []Frame{keyed(t, "a2", 12), keyed(t, "b0", 13), keyed(t, "c1", 14)}, set.callback(t, 1))
	eventually(t, 5*time.Second, "b0 to reach the sidecar", func() bool { return stalled.count("b0") == 1 })
	sendRetrying(t, first, []Frame{keyed(t, "c2", 15), keyed(t, "c3", 16)}, set.callback(t, 2))

	held := first.CloseAndTake()
	var names []string
	var keys []uint64
	for _, h := range held {
		msg, _, err := sdp.Decode(h.Frame.Bytes)
		if err != nil {
			t.Fatalf("held frame: %v", err)
		}
		names = append(names, frameName(msg.(*sdp.ResourceFrame)))
		keys = append(keys, h.Frame.Key)
		if h.Frame.Items != 3 {
			t.Errorf("held frame %s has %d items, want 3", names[len(names)-1], h.Frame.Items)
		}
	}
	// What was not acknowledged is held, in Send order.
	wantNames, wantKeys := []string{"a2", "b0", "c1", "c2", "c3"}, []uint64{12, 13, 14, 15, 16}
	if len(names) == 4 {
		wantNames, wantKeys = wantNames[1:], wantKeys[1:]
	}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("held frames %v, want %v", names, wantNames)
	}
	if !slices.Equal(keys, wantKeys) {
		t.Errorf("held keys %v, want %v", keys, wantKeys)
	}
	if !held[len(held)-4].Sent {
		t.Error("b0 was written to the sidecar but Held.Sent is false")
	}
	if q := first.QueuedBytes(); q != 0 {
		t.Errorf("QueuedBytes after CloseAndTake = %d, want 0", q)
	}
	if err := first.Send([]Frame{keyed(t, "late", 1)}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after CloseAndTake: %v, want ErrClosed", err)
	}
	if again := first.CloseAndTake(); again != nil {
		t.Errorf("second CloseAndTake returned %d frames, want none", len(again))
	}
	if err := shutdownClient(t, first, time.Second); err != nil {
		t.Errorf("Shutdown after CloseAndTake: %v", err)
	}

	// Only batch 0 has settled so far: batches 1 and 2 wait for their
	// frames' new owner.
	set.mu.Lock()
	settledEarly := len(set.errs)
	set.mu.Unlock()
	if settledEarly != 1 {
		t.Fatalf("%d batches settled before the held frames were sent on, want 1", settledEarly)
	}

	rec := newRecorder(nil)
	l2, endpoint2 := listen(t, "tcp")
	serve(t, &Server{Handler: rec}, l2)
	s2 := testSettings(t, endpoint2, nil)
	s2.Shard, s2.ShardCount = 3, 4 // differs from the frames' shard 1: the client restamps it
	second := startClient(t, s2)
	for _, h := range held {
		sendRetrying(t, second, []Frame{h.Frame}, h.Settle)
	}
	for b, err := range set.wait(t, 10*time.Second) {
		if err != nil {
			t.Errorf("batch %d settled with %v", b, err)
		}
	}
	if err := shutdownClient(t, second, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !slices.Equal(rec.order, wantNames) {
		t.Errorf("second sidecar received %v, want %v", rec.order, wantNames)
	}
	if len(rec.hellos) != 1 || rec.hellos[0].Shard != 3 {
		t.Errorf("second sidecar's Hellos %+v, want one for shard 3", rec.hellos)
	}
}

func TestCloseAndTakeBeforeStartAndSettleErrors(t *testing.T) {
	c, err := NewClient(testSettings(t, "tcp://127.0.0.1:1", nil))
	if err != nil {
		t.Fatal(err)
	}
	set := newSettledSet(2)
	sendRetrying(t, c, []Frame{keyed(t, "x0", 1), keyed(t, "x1", 2)}, set.callback(t, 0))
	sendRetrying(t, c, []Frame{keyed(t, "y0", 3)}, nil)
	sendRetrying(t, c, []Frame{keyed(t, "z0", 4)}, set.callback(t, 1))
	held := c.CloseAndTake()
	if len(held) != 4 {
		t.Fatalf("CloseAndTake of a client never started returned %d frames, want 4", len(held))
	}
	for _, h := range held {
		if h.Sent {
			t.Errorf("frame with key %d marked Sent, but nothing was written", h.Frame.Key)
		}
	}
	held[0].Settle(nil)
	held[1].Settle(ErrRejected)
	held[2].Settle(nil) // a Send without a callback: nothing to report
	held[3].Settle(nil)
	errs := set.wait(t, time.Second)
	if !errors.Is(errs[0], ErrRejected) {
		t.Errorf("batch 0 settled with %v, want ErrRejected joined from its second frame", errs[0])
	}
	if errs[1] != nil {
		t.Errorf("batch 1 settled with %v, want nil", errs[1])
	}
	if err := shutdownClient(t, c, time.Second); err != nil {
		t.Errorf("Shutdown after CloseAndTake: %v", err)
	}
}
