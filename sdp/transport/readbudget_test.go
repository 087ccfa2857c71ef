// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"net"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// partialFrame is a Hello and the first sent bytes of a ResourceFrame that
// declares 2 MiB.
func partialFrame(t *testing.T, sent int) []byte {
	return append(append(mustHello(t), frameHeader(sdp.TypeResourceFrame, 2<<20-sdp.HeaderSize)...), make([]byte, sent)...)
}

func TestAPartialFrameHoldsWhatArrivedPlusOneStep(t *testing.T) {
	l, endpoint := listen(t, "unix")
	srv := &Server{Handler: newRecorder(nil), FrameTimeout: time.Minute}
	serve(t, srv, l)
	conn := dialRaw(t, endpoint)
	const sent = 300 << 10
	if _, err := conn.Write(partialFrame(t, sent)); err != nil {
		t.Fatal(err)
	}
	// The first FreeFrameBytes are free; the rest is taken a step at a
	// time, before the step is read.
	want := int64((sent-FreeFrameBytes+readStep-1)/readStep) * readStep
	eventually(t, 5*time.Second, "the budget of the bytes sent to be taken", func() bool { return srv.Stats().ReadBudgetBytes == want })
	time.Sleep(50 * time.Millisecond)
	if got := srv.Stats().ReadBudgetBytes; got != want || got > sent-FreeFrameBytes+readStep {
		t.Errorf("a partial frame of %d bytes holds %d bytes of budget, want %d", sent, got, want)
	}
	conn.Close()
	eventually(t, 5*time.Second, "the budget to be given back", func() bool { return srv.Stats().ReadBudgetBytes == 0 })
}

func TestReadBudgetBoundsAllPartialFramesAndTheCollectorGetsThrough(t *testing.T) {
	rec := newRecorder(nil)
	l, endpoint := listen(t, "unix")
	const budget = 4 << 20
	srv := &Server{Handler: rec, ReadBudget: budget, FrameTimeout: time.Minute, quietGrace: 200 * time.Millisecond}
	serve(t, srv, l)
	h := newHealthy(t, endpoint, rec)
	h.send("before")

	// 12 peers each send 1 MiB of a 2 MiB frame: 12 MiB wanted, 4 MiB
	// allowed. Those that cannot get budget wait, and after the grace
	// close the stalled holders.
	var peers []net.Conn
	partial := partialFrame(t, 1<<20)
	for range 12 {
		c := dialRaw(t, endpoint)
		go c.Write(partial)
		peers = append(peers, c)
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if got := srv.Stats().ReadBudgetBytes; got > budget {
			t.Fatalf("%d bytes of budget held, over the budget of %d", got, budget)
		}
		time.Sleep(time.Millisecond)
	}
	// A collector frame larger than FreeFrameBytes needs budget too: it
	// gets it by closing a stalled peer.
	h.wg.Add(1)
	h.sent = append(h.sent, "large")
	sendRetrying(t, h.c, []Frame{testFrame(t, "large", 300<<10)}, func(err error) {
		h.mu.Lock()
		h.errs = append(h.errs, err)
		h.mu.Unlock()
		h.wg.Done()
	})
	h.check()
	if st := srv.Stats(); st.Evicted == 0 || st.ReadBudgetBytes > budget {
		t.Errorf("stats %+v, want evictions of stalled peers and the budget kept", st)
	}
	for _, c := range peers {
		c.Close()
	}
	eventually(t, 5*time.Second, "the budget to be given back", func() bool { return srv.Stats().ReadBudgetBytes == 0 })
}

func TestABudgetSmallerThanAFrameIsRefused(t *testing.T) {
	l, _ := listen(t, "unix")
	srv := &Server{Handler: newRecorder(nil), ReadBudget: 1 << 20}
	if err := srv.Serve(l); err == nil {
		t.Fatal("Serve accepted a read budget below MaxFrameBytes")
	}
}
