// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// waitFor bounds every wait of these tests for something that must happen.
const waitFor = 10 * time.Second

// recorder is the update callback and OnError hook of a resolver under
// test. It fails the test when update is called concurrently or after
// Shutdown returned.
type recorder struct {
	t        *testing.T
	updates  chan []Member
	errs     chan error
	inUpdate atomic.Int32
	stopped  atomic.Bool
}

func newRecorder(t *testing.T) *recorder {
	return &recorder{t: t, updates: make(chan []Member, 100), errs: make(chan error, 1000)}
}

func (r *recorder) settings() Settings {
	return Settings{Logger: zaptest.NewLogger(r.t), OnError: r.onError}
}

func (r *recorder) update(members []Member) {
	if r.inUpdate.Add(1) != 1 {
		r.t.Error("update called concurrently")
	}
	defer r.inUpdate.Add(-1)
	if r.stopped.Load() {
		r.t.Error("update called after Shutdown returned")
	}
	r.updates <- members
}

func (r *recorder) onError(err error) {
	select {
	case r.errs <- err:
	default:
	}
}

// next returns the next member list passed to update.
func (r *recorder) next() []Member {
	r.t.Helper()
	select {
	case m := <-r.updates:
		return m
	case <-time.After(waitFor):
		r.t.Fatal("no update")
		return nil
	}
}

// nextError returns the next error passed to OnError.
func (r *recorder) nextError() error {
	r.t.Helper()
	select {
	case err := <-r.errs:
		return err
	case <-time.After(waitFor):
		r.t.Fatal("no error reported")
		return nil
	}
}

// noUpdate asserts that update has not been called since the last next.
func (r *recorder) noUpdate() {
	r.t.Helper()
	select {
	case m := <-r.updates:
		r.t.Errorf("unexpected update %v", m)
	default:
	}
}

// drainErrors forgets the errors reported so far.
func (r *recorder) drainErrors() {
	for {
		select {
		case <-r.errs:
		default:
			return
		}
	}
}

// start builds and starts the resolver of cfg, and shuts it down at the
// end of the test.
func (r *recorder) start(cfg Config, set Settings) Resolver {
	r.t.Helper()
	res, err := New(cfg, set)
	require.NoError(r.t, err)
	require.NoError(r.t, res.Start(context.Background(), r.update))
	var once sync.Once
	r.t.Cleanup(func() { once.Do(func() { r.shutdown(res) }) })
	return res
}

// shutdown stops res and checks that update is not called afterwards.
func (r *recorder) shutdown(res Resolver) {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	assert.NoError(r.t, res.Shutdown(ctx))
	r.stopped.Store(true)
}

// members builds the member list of ID, endpoint pairs.
func members(idEndpoint ...string) []Member {
	out := make([]Member, 0, len(idEndpoint)/2)
	for i := 0; i+1 < len(idEndpoint); i += 2 {
		out = append(out, Member{ID: idEndpoint[i], Endpoint: idEndpoint[i+1]})
	}
	return out
}

// endpoints builds the member list of endpoints that are their own IDs.
func endpoints(endpoints ...string) []Member {
	out := make([]Member, len(endpoints))
	for i, e := range endpoints {
		out[i] = Member{ID: e, Endpoint: e}
	}
	return out
}
