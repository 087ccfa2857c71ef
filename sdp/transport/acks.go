// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// ackReadBuffer is the client's read buffer for Acks: room for a few
// hundred Acks without detail.
const ackReadBuffer = 4 << 10

// readAcks reads Acks until the connection fails or the sidecar breaks the
// protocol; errors of the latter kind wrap ErrProtocol.
func (c *Client) readAcks(conn net.Conn) error {
	// Acks are small and come in bursts: reading them through a buffer
	// takes one read for many instead of two per Ack.
	in := bufio.NewReaderSize(conn, ackReadBuffer)
	r := sdp.NewReader(in, sdp.MaxAckFrameSize)
	var ack sdp.Ack
	var settled []*batch
	var released [][]byte
	for {
		h, payload, err := r.Next()
		if err != nil {
			var fse *sdp.FrameSizeError
			if errors.As(err, &fse) && fse.Header.Type == sdp.TypeAck {
				return c.oversizedAck(in, fse)
			}
			if isSDPError(err) {
				return fmt.Errorf("%w: reading Acks: %w", ErrProtocol, err)
			}
			return fmt.Errorf("reading Acks: %w", err)
		}
		if h.Type != sdp.TypeAck {
			return fmt.Errorf("%w: sidecar sent a %s frame, want Ack", ErrProtocol, sdp.TypeName(h.Type))
		}
		if err := ack.DecodePayload(payload); err != nil {
			return fmt.Errorf("%w: decoding Ack: %w", ErrProtocol, err)
		}
		settled, released, err = c.handleAck(&ack, settled[:0], released[:0])
		if err != nil {
			return err
		}
		callSettled(settled)
		clear(settled)
		for _, b := range released {
			c.set.ReleaseFrame(b)
		}
		clear(released)
	}
}

// handleAck settles, returns to the queue or rejects the in-flight frames
// that ack covers, and returns the batches that it completed and, when the
// client releases frames, the bytes of the frames it settled.
func (c *Client) handleAck(ack *sdp.Ack, settled []*batch, released [][]byte) ([]*batch, [][]byte, error) {
	if ack.Status > sdp.AckRejected {
		return settled, released, fmt.Errorf("%w: sidecar sent Ack status %d, which the protocol does not define", ErrProtocol, ack.Status)
	}
	c.mu.Lock()
	if ack.Sequence > c.seq {
		seq := c.seq
		c.mu.Unlock()
		return settled, released, fmt.Errorf("%w: sidecar acknowledged sequence %d but only %d frames were sent", ErrProtocol, ack.Sequence, seq)
	}
	release := c.set.ReleaseFrame != nil
	now := time.Now()
	frames, items := 0, 0
	var retry []*entry
	var rejectErr error
	if ack.Status == sdp.AckRejected {
		rejectErr = fmt.Errorf("%w (shard %d): %s", ErrRejected, c.set.Shard, Truncate(ack.Detail))
	}
	for c.inflight.len() > 0 && c.inflight.front().seq <= ack.Sequence {
		e := c.inflight.pop()
		frames++
		items += e.items
		if release && ack.Status != sdp.AckRetry {
			if e.seq <= c.written {
				released = append(released, e.frame)
			} else {
				c.parked = append(c.parked, e.frame)
			}
		}
		switch ack.Status {
		case sdp.AckAccepted:
			settled = c.settleLocked(e, nil, settled)
		case sdp.AckRetry:
			e.seq = 0
			retry = append(retry, e)
		case sdp.AckRejected:
			settled = c.settleLocked(e, rejectErr, settled)
		}
	}
	if frames > 0 {
		c.lastProgress = now
		c.answeredAt = now
		if !c.acked {
			// The first Ack on a connection, whatever its status, shows
			// a sidecar that answers: retry waits start over from the
			// initial backoff, as the dial backoff does after this
			// session.
			c.retries = 0
		}
		c.acked = true
	}
	switch ack.Status {
	case sdp.AckAccepted:
		c.retries = 0
	case sdp.AckRetry:
		if len(retry) > 0 {
			all := append(retry, c.pending.drain()...)
			slices.SortFunc(all, func(a, b *entry) int { return cmp.Compare(a.id, b.id) })
			c.resetPendingLocked(all)
			c.retryAt = now.Add(c.retryBackoff(c.retries))
			c.retries++
		}
	}
	c.checkDrainedLocked()
	c.mu.Unlock()

	c.obs.AckReceived(c.set.Shard, ack.Status, frames)
	switch ack.Status {
	case sdp.AckRetry:
		if frames > 0 {
			c.log.Debug("Sidecar asked to retry frames later", slog.Int("frames", frames), slog.String("detail", Truncate(ack.Detail)))
		}
	case sdp.AckRejected:
		c.log.Warn("Sidecar rejected frames; they are not retried", slog.Int("frames", frames), slog.Int("items", items), slog.String("detail", Truncate(ack.Detail)))
	}
	c.signal()
	return settled, released, nil
}

// oversizedAck handles an Ack frame over sdp.MaxAckFrameSize, a protocol
// error of the sidecar. The client reads only the Ack's fixed fields (not
// the detail) to learn which frames it covers, and settles those frames as
// failed with an error wrapping ErrProtocol instead of sending them again:
// a sidecar that answers a frame with an over-long Ack would most likely do
// so every time, and resending would loop. The connection then ends; the
// frames the Ack does not cover return to the queue.
func (c *Client) oversizedAck(in io.Reader, fse *sdp.FrameSizeError) error {
	cause := fmt.Errorf("%w: %w (sdp.MaxAckFrameSize, the limit for Ack frames)", ErrProtocol, fse)
	var fixed [13]byte // sequence u64, status u8, detail length u32
	if _, err := io.ReadFull(in, fixed[:]); err != nil {
		return fmt.Errorf("%w; reading its fixed fields: %w", cause, err)
	}
	seq := binary.LittleEndian.Uint64(fixed[:])
	status := sdp.AckStatus(fixed[8])
	c.mu.Lock()
	if seq > c.seq {
		sent := c.seq
		c.mu.Unlock()
		return fmt.Errorf("%w; it acknowledges sequence %d but only %d frames were sent", cause, seq, sent)
	}
	failErr := fmt.Errorf("%w: the sidecar answered frames up to sequence %d with status %s in an Ack of %d bytes, over the %d-byte limit for Ack frames; the frames are reported failed instead of being sent again",
		ErrProtocol, seq, status, fse.Size(), sdp.MaxAckFrameSize)
	var settled []*batch
	frames, items := 0, 0
	for c.inflight.len() > 0 && c.inflight.front().seq <= seq {
		e := c.inflight.pop()
		frames++
		items += e.items
		settled = c.settleLocked(e, failErr, settled)
	}
	c.checkDrainedLocked()
	c.mu.Unlock()
	if pe, ok := c.obs.(ProtocolObserver); ok && frames > 0 {
		pe.FramesFailed(c.set.Shard, frames, items)
	}
	c.log.Error("Sidecar sent an over-long Ack; the frames it covers are reported failed", slog.Int("frames", frames), slog.Int("items", items),
		slog.Uint64("ack_bytes", fse.Size()), slog.Int("limit", sdp.MaxAckFrameSize), slog.String("status", status.String()))
	callSettled(settled)
	return fmt.Errorf("%w; %d frames it covers were reported failed", cause, frames)
}
