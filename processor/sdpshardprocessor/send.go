// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/otelcol-sdp/otelcol-sdp/internal/fleet"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// send hands every shard its frames and, with wait_for_ack, waits until all
// are settled.
//
// The transport accepts each Send whole or not at all, but a batch spans
// several shards (and, when one shard's part exceeds queue_bytes, several
// Sends). send first checks that every shard has room, which refuses a
// batch before any of it is queued in the common case; when another batch
// takes the room in between, part of this one may already be queued when it
// is refused. Delivery is at least once: the client retries the whole batch
// and the sidecars may see those resources twice.
//
// f is the fleet snapshot the frames were routed over. When a resolver
// removes a member between routing and sending, that member's client is
// closed: sendPart routes its part again over the current snapshot, and a
// part already queued there is taken back and re-routed by the fleet
// manager, so the batch still settles by the new owners' acks.
//
// A shard's part larger than queue_bytes goes out in queue-sized Sends,
// each after the previous one settled: two consecutive ones never fit the
// queue together, so sending the next at once would always be refused and
// the client's retries would queue the first one again and again.
func (p *shardProcessor) send(ctx context.Context, f *fleet.Snapshot, byShard [][]transport.Frame) error {
	clients := f.Clients
	for shard, fs := range byShard {
		if len(fs) == 0 {
			continue
		}
		size := 0
		for _, f := range fs {
			size += len(f.Bytes)
		}
		// Frames taken back from a member that left count in the
		// queue_bytes of the member they wait for: they get its room
		// first, and memory stays within what is configured.
		waiting := p.shards.fleet.WaitingFor(f, shard)
		if free := p.shards.queueBytes - clients[shard].QueuedBytes() - waiting; size > free && (size <= p.shards.queueBytes || waiting > 0) {
			return p.refuse(ctx, fmt.Errorf("shard %d: %d bytes do not fit the %d free (frames taken back from a member that left hold %d): %w",
				shard, size, max(free, 0), waiting, transport.ErrQueueFull))
		}
	}
	// Each Send that is waited for reports on its own channel, buffered so
	// that the transport's callback never blocks, even after ctx ended or an
	// error ended the wait and nobody reads any more.
	//
	// The batch is refused for good only when every frame was settled and
	// every failure was a rejection. A frame rejected for good does not stop
	// the rest, and anything not delivered (not sent yet, given up at
	// shutdown, still awaited when ctx ends) makes the refusal retryable.
	var waits []chan error
	var rejections error
	for shard, fs := range byShard {
		var previous chan error
		for part := range queueSizedParts(fs, p.shards.queueBytes) {
			if previous != nil {
				err := awaitSettled(ctx, previous)
				if p.waitForAck {
					waits = waits[:len(waits)-1] // previous, settled now
				}
				switch {
				case err == nil:
				case ctx.Err() != nil:
					return p.refuse(ctx, fmt.Errorf("waiting for sidecar acks: %w", ctx.Err()))
				case !p.waitForAck:
					// Without wait_for_ack a rejection is only counted by
					// the client, as for any other frame.
				case onlyRejected(err):
					rejections = errors.Join(rejections, err)
				default:
					return p.refuse(ctx, err)
				}
			}
			var onSettled func(error)
			var done chan error
			if p.waitForAck || len(part) < len(fs) {
				done = make(chan error, 1)
				onSettled = func(err error) { done <- err }
			}
			var seqs []uint64
			if q := p.shards.queue; q != nil {
				// Stored before the client may settle it, deleted once
				// acknowledged: without wait_for_ack, OK means stored.
				var err error
				if seqs, err = q.persist(ctx, shard, part); err != nil {
					return p.refuse(ctx, fmt.Errorf("shard %d: %w", shard, err))
				}
				onSettled = q.onSettled(seqs, onSettled)
			}
			if err := p.shards.fleet.Send(f, shard, part, onSettled); err != nil {
				if seqs != nil {
					p.shards.queue.settled(seqs, true)
				}
				return p.refuse(ctx, fmt.Errorf("shard %d: %w", shard, err))
			}
			previous = done
			if p.waitForAck {
				waits = append(waits, done)
			}
		}
	}
	for _, done := range waits {
		err := awaitSettled(ctx, done)
		if err == nil {
			continue
		}
		if !onlyRejected(err) {
			return p.refuse(ctx, err)
		}
		rejections = errors.Join(rejections, err)
	}
	if rejections != nil {
		return p.refuse(ctx, rejections)
	}
	return nil
}

// awaitSettled returns what the settled callback that feeds done reported,
// or an error wrapping ctx's when ctx ends first.
func awaitSettled(ctx context.Context, done <-chan error) error {
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("waiting for sidecar acks: %w", ctx.Err())
	}
}

// queueSizedParts yields consecutive runs of frames of at most queueBytes
// bytes each; one frame always fits, since Validate requires queue_bytes to
// hold the largest frame.
func queueSizedParts(frames []transport.Frame, queueBytes int) iter.Seq[[]transport.Frame] {
	return func(yield func([]transport.Frame) bool) {
		start, size := 0, 0
		for i, f := range frames {
			if size+len(f.Bytes) > queueBytes && i > start {
				if !yield(frames[start:i]) {
					return
				}
				start, size = i, 0
			}
			size += len(f.Bytes)
		}
		if start < len(frames) {
			yield(frames[start:])
		}
	}
}
