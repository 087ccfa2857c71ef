// SPDX-License-Identifier: Apache-2.0

package transport

// The connection side of the client: dialing, the Hello, the writer that
// sends queued frames and the reader that settles them by Ack, and what
// happens to frames in flight when a connection is lost.

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// run connects, sends and reconnects until the client's context ends.
func (c *Client) run() {
	defer close(c.done)
	attempt := 0
	connected := false
	for first := true; ; first = false {
		if !first {
			t := time.NewTimer(backoff(attempt, c.set.InitialBackoff, c.set.MaxBackoff))
			select {
			case <-c.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			attempt++
		}
		conn, err := c.dial()
		if err != nil {
			if c.ctx.Err() != nil {
				return
			}
			// Warned at once and then every so often while it lasts, so
			// that a dead sidecar stays visible without flooding the log.
			c.obs.Disconnected(c.set.Shard, err)
			c.dialLog.warn(c.log, "Cannot connect to sidecar; retrying with backoff", slog.Any("error", err))
			continue
		}
		c.dialLog.reset()
		healthy, lost, err := c.session(conn, connected)
		connected = true
		if c.ctx.Err() != nil {
			return
		}
		c.obs.Disconnected(c.set.Shard, err)
		if errors.Is(err, ErrProtocol) {
			// The sidecar is broken or hostile: back off further on every
			// such connection instead of starting over, so that a sidecar
			// that always answers the same way is not hammered.
			c.log.Error("Sidecar broke the protocol; reconnecting with backoff", slog.Any("error", err), slog.Int("frames_to_send_again", lost))
			if pe, ok := c.obs.(ProtocolObserver); ok {
				pe.ProtocolError(c.set.Shard)
			}
			continue
		}
		// An if rather than a switch case: Go's coverage profile has no
		// block for case expressions, so mutation testing could not run
		// the tests against mutants of this one.
		if lost == 0 && errors.Is(err, io.EOF) {
			// Most likely the sidecar's idle timeout: nothing was lost.
			c.log.Info("Sidecar closed the connection with nothing in flight; reconnecting", slog.Any("error", err))
		} else {
			c.log.Warn("Sidecar connection lost; unacknowledged frames will be sent again", slog.Any("error", err), slog.Int("frames_to_send_again", lost))
		}
		if healthy {
			attempt = 0
		}
	}
}

// dial connects and, with TLS, completes the handshake, all within the
// dial timeout.
func (c *Client) dial() (net.Conn, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.set.DialTimeout)
	defer cancel()
	if c.set.TLS != nil {
		d := tls.Dialer{Config: c.set.TLS}
		return d.DialContext(ctx, c.network, c.address)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, c.network, c.address)
	if err != nil {
		return nil, err
	}
	return takeSocket(conn), nil
}

// vectorWriter is a connection that writes many buffers in one system
// call: sockConn. net.Buffers.WriteTo does so only for the runtime's own
// sockets.
type vectorWriter interface {
	writeBuffers(bufs [][]byte) (int64, error)
}

// writeBuffers writes bufs to conn in order, in one system call where conn
// can. It may consume bufs.
func writeBuffers(conn net.Conn, bufs net.Buffers) error {
	if vw, ok := conn.(vectorWriter); ok {
		_, err := vw.writeBuffers(bufs)
		return err
	}
	return writeBuffersTo(conn, bufs)
}

// writeBuffersTo is writeBuffers for other connections. It is a function
// of its own because bufs escapes to the heap in it: in writeBuffers it
// would cost an allocation on every write, the vectorWriter's too.
func writeBuffersTo(conn net.Conn, bufs net.Buffers) error {
	_, err := bufs.WriteTo(conn)
	return err
}

var errAckTimeout = errors.New("no Ack progress within the ack timeout")

// session runs one connection until it fails or the client stops. healthy
// says the sidecar acknowledged something or the connection lasted, so the
// next dial need not back off further; lost is the number of frames in
// flight that return to the queue.
func (c *Client) session(conn net.Conn, reconnect bool) (healthy bool, lost int, err error) {
	start := time.Now()
	c.mu.Lock()
	if c.ctx.Err() != nil {
		c.mu.Unlock()
		conn.Close()
		return false, 0, c.ctx.Err()
	}
	c.conn = conn
	c.seq, c.written = 0, 0
	c.acked = false
	// A retry wait was asked for on the old connection; the dial backoff
	// has spaced this one, and a sidecar that recovered should get the
	// frames now.
	c.retryAt = time.Time{}
	c.mu.Unlock()

	readerDone := make(chan struct{})
	var readErr error
	defer func() {
		conn.Close()
		<-readerDone
		// A reader that found a protocol error closes the connection under
		// the writer, whose error ("use of closed network connection")
		// would otherwise hide the cause and its backoff.
		if err == nil || errors.Is(readErr, ErrProtocol) {
			err = readErr
		}
		c.mu.Lock()
		c.conn = nil
		c.seq, c.written = 0, 0
		// The writer has returned: no write reads the parked frames now.
		parked := c.parked
		c.parked = nil
		lost = c.inflight.len()
		c.requeueLocked()
		healthy = c.acked || time.Since(start) > c.set.MaxBackoff
		c.mu.Unlock()
		c.releaseParked(parked)
	}()

	// The reader starts first so that it is there to be waited for however
	// the session ends.
	go func() {
		defer close(readerDone)
		readErr = c.readAcks(conn)
		conn.Close() // unblock a writer stuck on a peer that is gone
	}()

	if err := conn.SetWriteDeadline(time.Now().Add(c.set.WriteTimeout)); err != nil {
		return false, 0, err
	}
	if _, err := conn.Write(c.hello); err != nil {
		return false, 0, fmt.Errorf("writing Hello: %w", err)
	}
	if reconnect {
		c.log.Info("Reconnected to sidecar")
	} else {
		c.log.Debug("Connected to sidecar")
	}
	c.obs.Connected(c.set.Shard, reconnect)
	return false, 0, c.writeLoop(conn, readerDone)
}

// releaseParked releases frames answered while the write that sent them
// was still running, now that it has returned.
func (c *Client) releaseParked(parked [][]byte) {
	for _, b := range parked {
		c.set.ReleaseFrame(b)
	}
}

// requeueLocked returns in-flight frames to the queue, in Send order, to be
// sent again with new sequences on the next connection.
func (c *Client) requeueLocked() {
	if c.inflight.len() == 0 {
		return
	}
	all := append(c.inflight.drain(), c.pending.drain()...)
	for _, e := range all {
		e.seq = 0
	}
	slices.SortFunc(all, func(a, b *entry) int { return cmp.Compare(a.id, b.id) })
	c.resetPendingLocked(all)
}

// writeLoop writes queued frames until the connection fails, the reader
// ends, Acks stop coming or the client stops.
func (c *Client) writeLoop(conn net.Conn, readerDone <-chan struct{}) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var batch []outgoing
	var bufs net.Buffers
	var spare [][]byte
	for {
		c.mu.Lock()
		now := time.Now()
		if c.inflight.len() > 0 && now.Sub(c.lastProgress) >= c.set.AckTimeout {
			n := c.inflight.len()
			c.mu.Unlock()
			return fmt.Errorf("%w (%v, %d frames in flight)", errAckTimeout, c.set.AckTimeout, n)
		}
		hold := c.lingerLocked(now)
		batch = batch[:0]
		if hold == 0 {
			batch = c.takeLocked(batch, now)
		}
		last := c.seq
		wait := time.Duration(-1)
		if len(batch) == 0 {
			if c.inflight.len() > 0 {
				wait = c.lastProgress.Add(c.set.AckTimeout).Sub(now)
			}
			if c.pending.len() > 0 && !c.retryAt.IsZero() {
				if w := c.retryAt.Sub(now); wait < 0 || w < wait {
					wait = w
				}
			}
		}
		// A wait for an Ack or a retry is at least a millisecond, so that
		// the writer does not spin on one that is due; a linger ends when
		// it ends.
		if wait >= 0 {
			wait = max(wait, time.Millisecond)
		}
		if hold > 0 && (wait < 0 || hold < wait) {
			wait = hold
		}
		c.mu.Unlock()

		if len(batch) > 0 {
			bufs = bufs[:0]
			for _, o := range batch {
				bufs = append(bufs, o.bytes)
			}
			if err := conn.SetWriteDeadline(time.Now().Add(c.set.WriteTimeout)); err != nil {
				return err
			}
			err := writeBuffers(conn, bufs)
			clear(bufs) // the frames may be released before the next write
			if err != nil {
				return fmt.Errorf("writing frames: %w", err)
			}
			// The reader parks frames Acked before this point; the two
			// slices take turns so that parking allocates nothing.
			c.mu.Lock()
			c.written = last
			parked := c.parked
			c.parked = spare[:0]
			c.mu.Unlock()
			c.releaseParked(parked)
			clear(parked)
			spare = parked
			sent := Sent{Frames: len(batch)}
			for _, o := range batch {
				sent.Bytes += len(o.bytes)
				sent.Items += o.items
				if o.retransmission {
					sent.Retransmissions++
				}
			}
			c.obs.FramesSent(c.set.Shard, sent)
			clear(batch)
			continue
		}

		var tick <-chan time.Time
		if wait >= 0 {
			timer.Reset(wait)
			tick = timer.C
		}
		select {
		case <-c.wake:
		case <-tick:
		case <-readerDone:
			return nil
		case <-c.ctx.Done():
			return c.ctx.Err()
		}
		timer.Stop()
	}
}

// outgoing is what the writer needs of a frame, copied under the lock: an
// Ack may settle the entry while the write is still running.
type outgoing struct {
	bytes          []byte
	items          int
	retransmission bool
}

// takeLocked moves the next frames from the queue into flight, stamping
// their sequences, unless an Ack asked to wait.
func (c *Client) takeLocked(batch []outgoing, now time.Time) []outgoing {
	if !c.retryAt.IsZero() {
		if now.Before(c.retryAt) {
			return batch
		}
		c.retryAt = time.Time{}
	}
	size := 0
	for c.pending.len() > 0 && len(batch) < maxWriteFrames && (len(batch) == 0 || size+len(c.pending.front().frame) <= maxWriteBytes) {
		e := c.pending.pop()
		c.pendingBytes -= len(e.frame)
		c.seq++
		e.seq = c.seq
		// The frame was checked in Send; SetSequence cannot fail on it.
		_ = sdp.SetSequence(e.frame, e.seq)
		if c.inflight.len() == 0 {
			c.lastProgress = now
		}
		c.inflight.push(e)
		batch = append(batch, outgoing{bytes: e.frame, items: e.items, retransmission: e.sent})
		e.sent = true
		size += len(e.frame)
	}
	return batch
}
