// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"cmp"
	"errors"
	"slices"
	"sync"
)

// Held is a frame that CloseAndTake took back from a client, not yet
// settled. Whoever takes it owns it: send it on (for example to the
// client of the member that owns its resource now) and call Settle once
// with the outcome.
type Held struct {
	// Frame is the frame as it was given to Send, with its Key; its
	// sequence and shard are rewritten by the client that sends it next.
	Frame Frame
	// Sent says the frame was written on a connection before: its sidecar
	// may have received it without acknowledging it, so sending it again
	// can deliver it twice.
	Sent bool

	batch *batch
	mu    *sync.Mutex
}

// Settle settles the frame in the batch of the Send that queued it: when
// it was the last unsettled frame of that batch, the batch's settled
// callback runs (in this goroutine) with the joined errors of its frames.
// err is nil when the frame was accepted. Settle may be called from any
// goroutine; calling it more than once per Held is a bug.
func (h Held) Settle(err error) {
	b := h.batch
	if b == nil {
		return
	}
	h.mu.Lock()
	if err != nil {
		b.err = errors.Join(b.err, err)
	}
	b.remaining--
	done := b.remaining == 0
	h.mu.Unlock()
	if done {
		b.settled(b.err)
	}
}

// CloseAndTake stops the client at once, without waiting for Acks, and
// returns the frames it held, queued or in flight, in Send order, without
// settling them: each one's Settle must be called by whoever sends it on.
// Frames of a batch that the client had already settled in part keep that
// part: the batch's callback runs once, when its last frame settles.
// After CloseAndTake the client behaves as after Shutdown: Send returns
// ErrClosed and Shutdown returns nil. A client already shut down or
// closed returns nil.
//
// A frame that was in flight may have reached the sidecar, which may still
// process it; sending it elsewhere then delivers it twice (at least once,
// never lost).
func (c *Client) CloseAndTake() []Held {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil
	}
	c.closing = true
	started := c.started
	c.cancel()
	if c.conn != nil {
		c.conn.Close()
	}
	c.mu.Unlock()
	defer close(c.shutdown)
	if started {
		<-c.done
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	rest := append(c.inflight.drain(), c.drainPendingLocked()...)
	slices.SortFunc(rest, func(a, b *entry) int { return cmp.Compare(a.id, b.id) })
	held := make([]Held, len(rest))
	for i, e := range rest {
		held[i] = Held{
			Frame: Frame{Bytes: e.frame, Items: e.items, Key: e.key},
			Sent:  e.sent,
			batch: e.batch,
			mu:    &c.mu,
		}
		c.held -= len(e.frame)
		e.frame = nil
	}
	c.checkDrainedLocked()
	return held
}
