// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

// Frames waiting for a member: taken back from a member that left the
// fleet, or left over from a batch routed again whose part could be queued
// only in part. One goroutine (the fleet manager's run) owns them and sends
// each to the member that owns its resource now; until then their bytes
// count in that member's queue_bytes.

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// rerouteRetry spaces attempts to place taken-back frames while their new
// owners' queues are full or the fleet is empty.
const rerouteRetry = 10 * time.Millisecond

// orphan is a frame waiting to be sent to the member that owns its
// resource now: taken back from a member that left, or left over from a
// batch routed again when only part of it could be queued.
type orphan struct {
	frame  transport.Frame
	settle func(error) // nil: nobody waits for it
	from   string      // ID of the member it was meant for
}

// placeOrphans sends every taken-back frame to the member that owns its
// resource now, one Send per frame so that a full queue holds back only
// that frame. It reports whether none is left waiting.
func (fm *fleetManager) placeOrphans() bool {
	if len(fm.orphans) == 0 {
		return true
	}
	f := fm.set.current.Load()
	if f.members.Len() == 0 {
		return false
	}
	rest := fm.orphans[:0]
	placed := 0
	for _, o := range fm.orphans {
		owner := f.members.Owner(o.frame.Key)
		if err := f.clients[owner].Send([]transport.Frame{o.frame}, o.settle); err != nil {
			// ErrQueueFull is backpressure; ErrClosed cannot happen here,
			// since only run replaces clients. Either way it waits.
			rest = append(rest, o)
			continue
		}
		placed++
	}
	clear(fm.orphans[len(rest):])
	fm.orphans = rest
	fm.countWaiting(f)
	if placed > 0 {
		fm.set.telemetry.ProcessorSdpshardReroutedFrames.Add(context.Background(), int64(placed), fm.set.obs.idAttrs)
	}
	return len(fm.orphans) == 0
}

// drainOrphans places the remaining orphans until none is left or the
// shutdown's context ends, then abandons the rest.
func (fm *fleetManager) drainOrphans() {
	for !fm.placeOrphans() {
		select {
		case <-fm.drain.Done():
			fm.abandonOrphans()
			return
		case <-time.After(rerouteRetry):
		}
	}
}

func (fm *fleetManager) abandonOrphans() {
	if len(fm.orphans) == 0 {
		return
	}
	frames, items := len(fm.orphans), 0
	err := fmt.Errorf("%w: %d frames of members that left the fleet were not placed before shutdown", transport.ErrUndelivered, frames)
	for _, o := range fm.orphans {
		items += o.frame.Items
		fm.set.telemetry.ProcessorSdpshardUndeliveredItems.Add(context.Background(), int64(o.frame.Items),
			fm.set.obs.with(attribute.String("member", o.from)))
		if o.settle != nil {
			o.settle(err)
		}
	}
	fm.orphans = nil
	fm.waiting.Store(nil)
	fm.set.logger.Error("Frames of members that left the fleet undelivered at shutdown", zap.Int("frames", frames), zap.Int("items", items))
}

// countWaiting publishes the taken-back frames' bytes by the member of f
// that owns each.
func (fm *fleetManager) countWaiting(f *fleet) {
	if len(fm.orphans) == 0 || f.members.Len() == 0 {
		fm.waiting.Store(nil)
		return
	}
	waiting := make(map[string]int)
	for _, o := range fm.orphans {
		waiting[f.members.ID(f.members.Owner(o.frame.Key))] += len(o.frame.Bytes)
	}
	fm.waiting.Store(&waiting)
}

// waitingFor returns the bytes of taken-back frames waiting for member idx
// of f; 0 without a fleet.
func (fm *fleetManager) waitingFor(f *fleet, idx int) int {
	if fm == nil {
		return 0
	}
	w := fm.waiting.Load()
	if w == nil {
		return 0
	}
	return (*w)[f.members.ID(idx)]
}

// adopt takes frames that could not be queued for member from, after
// other frames of the same Send were: they wait with the taken-back frames,
// counted in their owner's queue_bytes, and settled is called once when
// all of them have settled. Once run has ended they are settled at once as
// undelivered.
func (fm *fleetManager) adopt(frames []transport.Frame, from string, settled func(error)) {
	each := settleAfter(len(frames), settled)
	fm.mu.Lock()
	if fm.stopped {
		fm.mu.Unlock()
		if each != nil {
			err := fmt.Errorf("%w: the processor is shutting down", transport.ErrUndelivered)
			for range frames {
				each(err)
			}
		}
		return
	}
	for _, fr := range frames {
		fm.inbox = append(fm.inbox, orphan{frame: fr, settle: each, from: from})
	}
	fm.mu.Unlock()
	select {
	case fm.kick <- struct{}{}:
	default:
	}
}
