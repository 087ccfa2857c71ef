// SPDX-License-Identifier: Apache-2.0

package transport

import "time"

// The linger: with ClientSettings.Linger, the writer holds queued frames
// until they add up to BatchBytes or the oldest has waited Linger, so that
// the frames of many Sends go out in one write and the sidecar wakes once
// for them. Sends do not wake the writer for every frame: only for the
// first frame queued (the writer then arms a timer for the oldest one's
// deadline) and for the one that brings the queue to BatchBytes.

// Flush makes the writer write the frames queued so far without waiting
// for the rest of their linger. It does not wait for the write; without a
// Linger it does nothing, since nothing waits.
func (c *Client) Flush() {
	c.mu.Lock()
	wake := c.flushLocked()
	c.mu.Unlock()
	if wake {
		c.signal()
	}
}

// flushLocked marks every frame queued so far as due now and reports
// whether the writer must be woken for it.
func (c *Client) flushLocked() bool {
	if c.set.Linger <= 0 || c.pending.len() == 0 || c.flushID >= c.nextID {
		return false
	}
	c.flushID = c.nextID
	return true
}

// lingerWakeLocked counts size bytes more of pending frames, about to be
// queued, and reports whether the writer must be woken for them: always
// without a linger; with one, when they are the first pending frames or
// bring the pending bytes to BatchBytes.
func (c *Client) lingerWakeLocked(size int) bool {
	before := c.pendingBytes
	c.pendingBytes += size
	if c.set.Linger <= 0 {
		return true
	}
	return c.pending.len() == 0 || (before < c.set.BatchBytes && c.pendingBytes >= c.set.BatchBytes)
}

// lingerLocked returns how long the writer must still hold the pending
// frames, zero when they are due: no linger, nothing pending, shutting
// down, the oldest frame sent before or flushed, BatchBytes reached, or
// the oldest frame's linger over.
func (c *Client) lingerLocked(now time.Time) time.Duration {
	if c.set.Linger <= 0 || c.pending.len() == 0 || c.closing {
		return 0
	}
	front := c.pending.front()
	if front.sent || front.id <= c.flushID || c.pendingBytes >= c.set.BatchBytes {
		return 0
	}
	return max(front.queued.Add(c.set.Linger).Sub(now), 0)
}

// resetPendingLocked replaces the pending frames with entries and counts
// their bytes.
func (c *Client) resetPendingLocked(entries []*entry) {
	c.pending.reset(entries)
	c.pendingBytes = 0
	for _, e := range entries {
		c.pendingBytes += len(e.frame)
	}
}

// drainPendingLocked removes and returns every pending frame.
func (c *Client) drainPendingLocked() []*entry {
	c.pendingBytes = 0
	return c.pending.drain()
}
