// SPDX-License-Identifier: Apache-2.0

package fleet

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/internal/eject"
	"github.com/otelcol-sdp/otelcol-sdp/internal/resolver"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sidecar is a transport server that counts the items of the frames it
// accepts by resource hash and, while held, answers nothing.
type sidecar struct {
	endpoint string
	mu       sync.Mutex
	got      map[uint64]int
	hold     chan struct{} // nil: answers at once
}

func (s *sidecar) HandleFrame(_ *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string) {
	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	if hold != nil {
		<-hold
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[f.ResourceHash] += int(f.ItemCount)
	return sdp.AckAccepted, ""
}

func (s *sidecar) holdAcks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = make(chan struct{})
}

func (s *sidecar) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		close(s.hold)
		s.hold = nil
	}
}

func (s *sidecar) items(key uint64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[key]
}

func startSidecar(t *testing.T) *sidecar {
	t.Helper()
	endpoint := "unix://" + filepath.Join(t.TempDir(), "s.sock")
	l, err := transport.Listen(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	sc := &sidecar{endpoint: endpoint, got: map[uint64]int{}}
	srv := &transport.Server{Handler: sc}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		sc.release()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	})
	return sc
}

func clientSettings(endpoint string) transport.ClientSettings {
	return transport.ClientSettings{
		Endpoint:       endpoint,
		Sender:         "fleet-test",
		ShardCount:     1,
		QueueBytes:     1 << 20,
		DialTimeout:    time.Second,
		InitialBackoff: 5 * time.Millisecond,
		MaxBackoff:     50 * time.Millisecond,
		WriteTimeout:   time.Second,
		AckTimeout:     10 * time.Second,
	}
}

func observe(resolver.Member) Observed { return Observed{Leave: func() {}} }

// frame returns a frame of one resource with items items, keyed by key.
func frame(t *testing.T, key uint64, items int) transport.Frame {
	t.Helper()
	f := sdp.ResourceFrame{Signal: 1, ResourceHash: key, ItemCount: uint32(items), OTLP: []byte{0x0a, 0x00}}
	b, err := f.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	return transport.Frame{Bytes: b, Items: items, Key: key}
}

// keyOwnedBy returns a key that member id of f owns.
func keyOwnedBy(t *testing.T, f *Snapshot, id string) uint64 {
	t.Helper()
	for k := uint64(1); k < 10_000; k++ {
		if f.Members.ID(f.Members.Owner(k)) == id {
			return k
		}
	}
	t.Fatalf("no key owned by %s", id)
	return 0
}

// source is a resolver the test drives.
type source struct{ update func([]resolver.Member) }

func (s *source) Start(_ context.Context, update func([]resolver.Member)) error {
	s.update = update
	return nil
}

func (s *source) Shutdown(context.Context) error { return nil }

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func shutdown(t *testing.T, fl *Fleet) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fl.Shutdown(ctx)
	for _, c := range fl.Current().Clients {
		if err := c.Shutdown(ctx); err != nil {
			t.Errorf("client shutdown: %v", err)
		}
	}
}

func TestSettleAfter(t *testing.T) {
	if settleAfter(3, nil) != nil {
		t.Error("settleAfter with no callback returned one")
	}
	var got []error
	each := settleAfter(3, func(err error) { got = append(got, err) })
	errA, errB := errors.New("a"), errors.New("b")
	each(errA)
	each(nil)
	if len(got) != 0 {
		t.Fatalf("settled after 2 of 3: %v", got)
	}
	each(errB)
	if len(got) != 1 || !errors.Is(got[0], errA) || !errors.Is(got[0], errB) {
		t.Errorf("settled with %v, want once with a and b joined", got)
	}
}

// A member that leaves has its unanswered frames taken back and placed with
// the member that owns their resource now; the batch settles once there.
func TestLeavingMemberFramesGoToTheNewOwner(t *testing.T) {
	a, b := startSidecar(t), startSidecar(t)
	src := &source{}
	var changes, rerouted atomic.Int64
	fl := New(Settings{
		Logger:         zap.NewNop(),
		QueueBytes:     1 << 20,
		ClientSettings: clientSettings,
		NewSource:      func() (resolver.Resolver, error) { return src, nil },
		Observe:        observe,
		Hooks: Hooks{
			MembershipChanged: func() { changes.Add(1) },
			Rerouted:          func(n int) { rerouted.Add(int64(n)) },
		},
	}, nil)
	if err := fl.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, fl)
	src.update([]resolver.Member{{ID: "a", Endpoint: a.endpoint}, {ID: "b", Endpoint: b.endpoint}})
	eventually(t, "two members", func() bool { return fl.Current().Members.Len() == 2 })

	snap := fl.Current()
	key := keyOwnedBy(t, snap, "a")
	a.holdAcks()
	settled := make(chan error, 1)
	idx, _ := snap.Members.Index("a")
	if err := fl.Send(snap, idx, []transport.Frame{frame(t, key, 7)}, func(err error) { settled <- err }); err != nil {
		t.Fatal(err)
	}
	src.update([]resolver.Member{{ID: "b", Endpoint: b.endpoint}})
	select {
	case err := <-settled:
		if err != nil {
			t.Fatalf("settled with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the taken-back frame never settled")
	}
	if n := b.items(key); n != 7 {
		t.Errorf("the new owner received %d items, want 7", n)
	}
	// The new owner may answer before the fleet's goroutine, having queued
	// the frame, counts it as rerouted and no longer waiting.
	eventually(t, "the counts after placing", func() bool {
		return changes.Load() == 2 && rerouted.Load() == 1 && fl.WaitingFor(fl.Current(), 0) == 0
	})
	time.Sleep(20 * time.Millisecond)
	if changes.Load() != 2 || rerouted.Load() != 1 {
		t.Errorf("%d membership changes and %d frames rerouted counted, want 2 and 1", changes.Load(), rerouted.Load())
	}
}

// A static member that holds frames past the stall timeout is ejected, its
// frames go to the other member, and it is taken back once it answers.
func TestStalledMemberIsEjectedAndTakenBack(t *testing.T) {
	a, b := startSidecar(t), startSidecar(t)
	endpoints := []string{a.endpoint, b.endpoint}
	var clients []*transport.Client
	for i, e := range endpoints {
		cs := clientSettings(e)
		cs.Shard, cs.ShardCount = uint32(i), 2
		c, err := transport.NewClient(cs)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	var ejections atomic.Int64
	fl := New(Settings{
		Logger:         zap.NewNop(),
		QueueBytes:     1 << 20,
		ClientSettings: clientSettings,
		Ejection: &Ejection{
			Policy:        eject.Policy{StallTimeout: 100 * time.Millisecond, MaxEjectedPercent: 50},
			ProbeInterval: 20 * time.Millisecond,
		},
		Hooks: Hooks{Ejected: func(metric.MeasurementOption) { ejections.Add(1) }},
	}, NewStatic(endpoints, clients, make([]metric.MeasurementOption, 2), make([]transport.Observer, 2)))
	if err := fl.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, fl)

	snap := fl.Current()
	key := keyOwnedBy(t, snap, snap.Members.ID(0))
	a.holdAcks()
	settled := make(chan error, 1)
	if err := fl.Send(snap, 0, []transport.Frame{frame(t, key, 3)}, func(err error) { settled <- err }); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the ejection", func() bool { return fl.EjectedCount() == 1 })
	if err := <-settled; err != nil {
		t.Fatalf("settled with %v", err)
	}
	if n := b.items(key); n != 3 {
		t.Errorf("the other member received %d items, want 3", n)
	}
	if ejections.Load() != 1 {
		t.Errorf("%d ejections counted, want 1", ejections.Load())
	}
	a.release()
	eventually(t, "the member taken back", func() bool { return fl.EjectedCount() == 0 })
}
