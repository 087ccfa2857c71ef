// SPDX-License-Identifier: Apache-2.0

package fleet

// Frames waiting for a member: taken back from a member that left the
// fleet (or was ejected), or left over from a batch routed again whose part
// could be queued only in part. One goroutine (run) owns them and sends
// each to the member that owns its resource now; until then their bytes
// count in that member's queue_bytes.

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// rerouteRetry spaces attempts to place taken-back frames while their new
// owners' queues are full or the fleet is empty.
const rerouteRetry = 10 * time.Millisecond

// orphan is a frame waiting to be sent to the member that owns its
// resource now.
type orphan struct {
	frame  transport.Frame
	settle func(error) // nil: nobody waits for it
	from   string      // ID of the member it was meant for
}

// Send sends part to member idx of f. When that member left the fleet
// after the batch was routed (its client is closed and a newer snapshot is
// published), the part is routed again over the current snapshot; settled
// is called once, when every frame of part has settled wherever it went.
// An error means none of part was queued.
func (fl *Fleet) Send(f *Snapshot, idx int, part []transport.Frame, settled func(error)) error {
	err := f.Clients[idx].Send(part, settled)
	if !errors.Is(err, transport.ErrClosed) {
		return err
	}
	now := fl.Current()
	if now == f {
		return err
	}
	if now.Members.Len() == 0 {
		return fmt.Errorf("the member left and no other is in the fleet: %w", shard.ErrNoMembers)
	}
	groups := make(map[int][]transport.Frame)
	var order []int
	for _, fr := range part {
		owner := now.Members.Owner(fr.Key)
		if _, ok := groups[owner]; !ok {
			order = append(order, owner)
		}
		groups[owner] = append(groups[owner], fr)
	}
	// Every group must fit before any is sent: a refusal after some were
	// queued would have the caller drop the stored copies of frames still
	// in flight.
	for _, owner := range order {
		size := 0
		for _, fr := range groups[owner] {
			size += len(fr.Bytes)
		}
		if free := fl.set.QueueBytes - now.Clients[owner].QueuedBytes() - fl.WaitingFor(now, owner); size > free {
			return fmt.Errorf("routing again to %s: %d bytes do not fit the %d free: %w", now.Members.ID(owner), size, free, transport.ErrQueueFull)
		}
	}
	// A group can still be refused after others were queued (a batch
	// taking the room meanwhile, another change). Refusing the part then
	// would have the caller drop the stored copies of frames still queued:
	// the rest waits with the fleet instead, like taken-back frames, and
	// the part settles when every group has.
	each := settleAfter(len(order), settled)
	for k, owner := range order {
		if err := fl.Send(now, owner, groups[owner], each); err != nil {
			if k == 0 {
				return err
			}
			for _, rest := range order[k:] {
				fl.adopt(groups[rest], now.Members.ID(rest), each)
			}
			return nil
		}
	}
	return nil
}

// settleAfter returns a callback that calls settled once it has been
// called n times, with their errors joined; nil when settled is nil.
func settleAfter(n int, settled func(error)) func(error) {
	if settled == nil {
		return nil
	}
	if n == 1 {
		return settled
	}
	var mu sync.Mutex
	var errs error
	return func(err error) {
		mu.Lock()
		errs = errors.Join(errs, err)
		n--
		last := n == 0
		mu.Unlock()
		if last {
			settled(errs)
		}
	}
}

// placeOrphans sends every taken-back frame to the member that owns its
// resource now, one Send per frame so that a full queue holds back only
// that frame. It reports whether none is left waiting.
func (fl *Fleet) placeOrphans() bool {
	if len(fl.orphans) == 0 {
		return true
	}
	f := fl.Current()
	if f.Members.Len() == 0 {
		return false
	}
	rest := fl.orphans[:0]
	placed := 0
	for _, o := range fl.orphans {
		owner := f.Members.Owner(o.frame.Key)
		if err := f.Clients[owner].Send([]transport.Frame{o.frame}, o.settle); err != nil {
			// ErrQueueFull is backpressure; ErrClosed cannot happen here,
			// since only run replaces clients. Either way it waits.
			rest = append(rest, o)
			continue
		}
		placed++
	}
	clear(fl.orphans[len(rest):])
	fl.orphans = rest
	fl.countWaiting(f)
	if placed > 0 && fl.set.Hooks.Rerouted != nil {
		fl.set.Hooks.Rerouted(placed)
	}
	return len(fl.orphans) == 0
}

// drainOrphans places the remaining orphans until none is left or the
// shutdown's context ends, then abandons the rest.
func (fl *Fleet) drainOrphans() {
	for !fl.placeOrphans() {
		select {
		case <-fl.drain.Done():
			fl.abandonOrphans()
			return
		case <-time.After(rerouteRetry):
		}
	}
}

func (fl *Fleet) abandonOrphans() {
	if len(fl.orphans) == 0 {
		return
	}
	frames, items := len(fl.orphans), 0
	err := fmt.Errorf("%w: %d frames of members that left the fleet were not placed before shutdown", transport.ErrUndelivered, frames)
	for _, o := range fl.orphans {
		items += o.frame.Items
		if fl.set.Hooks.Undelivered != nil {
			fl.set.Hooks.Undelivered(o.from, o.frame.Items)
		}
		if o.settle != nil {
			o.settle(err)
		}
	}
	fl.orphans = nil
	fl.waiting.Store(nil)
	fl.log.Error("Frames of members that left the fleet undelivered at shutdown", zap.Int("frames", frames), zap.Int("items", items))
}

// countWaiting publishes the taken-back frames' bytes by the member of f
// that owns each.
func (fl *Fleet) countWaiting(f *Snapshot) {
	if len(fl.orphans) == 0 || f.Members.Len() == 0 {
		fl.waiting.Store(nil)
		return
	}
	waiting := make(map[string]int)
	for _, o := range fl.orphans {
		waiting[f.Members.ID(f.Members.Owner(o.frame.Key))] += len(o.frame.Bytes)
	}
	fl.waiting.Store(&waiting)
}

// WaitingFor returns the bytes of taken-back frames waiting for member idx
// of f: they count in its queue_bytes.
func (fl *Fleet) WaitingFor(f *Snapshot, idx int) int {
	w := fl.waiting.Load()
	if w == nil {
		return 0
	}
	return (*w)[f.Members.ID(idx)]
}

// adopt takes frames that could not be queued for member from, after
// other frames of the same Send were: they wait with the taken-back frames,
// counted in their owner's queue_bytes, and settled is called once when
// all of them have settled. Once run has ended they are settled at once as
// undelivered.
func (fl *Fleet) adopt(frames []transport.Frame, from string, settled func(error)) {
	each := settleAfter(len(frames), settled)
	fl.mu.Lock()
	if fl.stopped {
		fl.mu.Unlock()
		if each != nil {
			err := fmt.Errorf("%w: the processor is shutting down", transport.ErrUndelivered)
			for range frames {
				each(err)
			}
		}
		return
	}
	for _, fr := range frames {
		fl.inbox = append(fl.inbox, orphan{frame: fr, settle: each, from: from})
	}
	fl.mu.Unlock()
	fl.wake()
}
