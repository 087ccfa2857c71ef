// SPDX-License-Identifier: Apache-2.0

package transport

// Shutting a client down and settling its frames.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// Shutdown stops accepting frames and keeps sending and awaiting Acks until
// every held frame has settled or ctx is done. Then it closes the
// connection and stops the client's goroutines. Frames still held are
// counted (Observer.Undelivered), logged, settled with an error wrapping
// ErrUndelivered, and reported in the returned error, which wraps
// ErrUndelivered. Later calls wait for the first and return nil.
func (c *Client) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		<-c.shutdown
		return nil
	}
	c.closing = true
	c.checkDrainedLocked()
	started := c.started
	c.mu.Unlock()
	defer close(c.shutdown)
	c.signal()

	if started {
		select {
		case <-c.drained:
		case <-ctx.Done():
		}
	}
	c.mu.Lock()
	c.cancel()
	if c.conn != nil {
		c.conn.Close()
	}
	c.mu.Unlock()
	if started {
		<-c.done
	}

	// The connection loop has returned: nothing else changes the queue,
	// but QueuedBytes may still read it.
	c.mu.Lock()
	rest := append(c.inflight.drain(), c.drainPendingLocked()...)
	if len(rest) == 0 {
		c.mu.Unlock()
		return nil
	}
	frames, items, size := len(rest), 0, 0
	for _, e := range rest {
		items += e.items
		size += len(e.frame)
	}
	err := fmt.Errorf("%w: %d frames (%d items, %d bytes) for shard %d on %s", ErrUndelivered, frames, items, size, c.set.Shard, c.set.Endpoint)
	var settled []*batch
	for _, e := range rest {
		settled = c.settleLocked(e, err, settled)
	}
	c.mu.Unlock()
	c.obs.Undelivered(c.set.Shard, frames, items)
	c.log.Error("Sidecar frames undelivered at shutdown", slog.Int("frames", frames), slog.Int("items", items), slog.Int("bytes", size))
	callSettled(settled)
	return err
}

func (c *Client) checkDrainedLocked() {
	if c.closing && c.held == 0 && !c.drainedShut {
		c.drainedShut = true
		close(c.drained)
	}
}

// settleLocked releases e and returns settled with e's batch appended when
// e was its last frame.
func (c *Client) settleLocked(e *entry, err error, settled []*batch) []*batch {
	c.held -= len(e.frame)
	e.frame = nil
	b := e.batch
	if b == nil {
		return settled
	}
	if err != nil {
		b.err = errors.Join(b.err, err)
	}
	b.remaining--
	if b.remaining == 0 {
		settled = append(settled, b)
	}
	return settled
}

func callSettled(batches []*batch) {
	for _, b := range batches {
		b.settled(b.err)
	}
}
