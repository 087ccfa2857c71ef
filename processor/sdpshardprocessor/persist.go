// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// Keys of the persistent queue in its storage client. Frames are stored
// under frameKeyPrefix and a sequence number; lowKey and highKey bound the
// sequence numbers that may still be stored, so that the frames left by a
// previous run are found with any storage client, without listing keys.
const (
	frameKeyPrefix = "frame/"
	lowKey         = "low"
	highKey        = "high"

	// storedHeader is the shard and item count stored before a frame.
	storedHeader = 8
	// replayChunk bounds the Gets of one storage Batch at startup.
	replayChunk = 256
)

// errStorage marks a batch refused because its frames could not be
// written to the persistent queue's storage.
var errStorage = errors.New("storage")

// persistentQueue keeps every frame in a storage extension from before the
// processor answers until its sidecar has settled it (acknowledged or
// rejected for good), and at startup sends again what a previous run left.
// Frames that Shutdown gives up on stay stored for the next run.
type persistentQueue struct {
	client storage.Client
	logger *zap.Logger

	// writeMu orders the storage writes, so that the high bound written
	// last is the largest: a crash never hides stored frames above it.
	writeMu sync.Mutex

	mu      sync.Mutex
	base    uint64 // sequence of window[0]; every lower one is settled and deleted
	next    uint64 // sequence of the next frame
	window  []bool // settled flags of base, base+1, ..., next-1
	deletes []string
	kick    chan struct{} // capacity 1: deletes are waiting
	stop    chan struct{}
	done    chan struct{}
	// room receives a token (capacity 1) each time a frame sent through the
	// queue settles, freeing its bytes in its shard's client: the replay of
	// the previous run's frames waits on it when a client's queue is full.
	room chan struct{}
}

// openPersistentQueue gets the storage client of the extension id for the
// processor set and reads the bounds a previous run left.
func openPersistentQueue(ctx context.Context, host component.Host, id, owner component.ID, logger *zap.Logger) (*persistentQueue, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("storage: extension %q is not configured in the service", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("storage: extension %q is not a storage extension", id)
	}
	client, err := se.GetClient(ctx, component.KindProcessor, owner, "")
	if err != nil {
		return nil, fmt.Errorf("storage: getting a client of %q: %w", id, err)
	}
	q := &persistentQueue{client: client, logger: logger, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		room: make(chan struct{}, 1)}
	low, high := storage.GetOperation(lowKey), storage.GetOperation(highKey)
	if err := client.Batch(ctx, low, high); err != nil {
		_ = client.Close(ctx)
		return nil, fmt.Errorf("storage: reading the queue bounds: %w", err)
	}
	q.base, q.next = decodeSeq(low.Value), decodeSeq(high.Value)
	if q.next < q.base {
		q.next = q.base
	}
	q.window = make([]bool, q.next-q.base)
	return q, nil
}

func decodeSeq(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

func encodeSeq(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

func frameKey(seq uint64) string { return frameKeyPrefix + strconv.FormatUint(seq, 10) }

// storedFrame is a frame a previous run left.
type storedFrame struct {
	seq   uint64
	shard int
	frame transport.Frame
}

// leftovers returns the frames a previous run left, in sequence order.
// Sequences whose frame is gone count as settled.
func (q *persistentQueue) leftovers(ctx context.Context) ([]storedFrame, error) {
	var out []storedFrame
	q.mu.Lock()
	base, next := q.base, q.next
	q.mu.Unlock()
	for start := base; start < next; start += replayChunk {
		end := min(start+replayChunk, next)
		ops := make([]*storage.Operation, 0, end-start)
		for seq := start; seq < end; seq++ {
			ops = append(ops, storage.GetOperation(frameKey(seq)))
		}
		if err := q.client.Batch(ctx, ops...); err != nil {
			return nil, fmt.Errorf("storage: reading stored frames: %w", err)
		}
		for i, op := range ops {
			seq := start + uint64(i)
			if len(op.Value) < storedHeader {
				q.settled([]uint64{seq}, false)
				continue
			}
			out = append(out, storedFrame{
				seq:   seq,
				shard: int(binary.BigEndian.Uint32(op.Value)),
				frame: transport.Frame{Bytes: op.Value[storedHeader:], Items: int(binary.BigEndian.Uint32(op.Value[4:]))},
			})
		}
	}
	return out, nil
}

// persist stores the frames of one Send for shard and returns their
// sequences; it returns once the storage client has written them.
func (q *persistentQueue) persist(ctx context.Context, shard int, frames []transport.Frame) ([]uint64, error) {
	ops := make([]*storage.Operation, 0, len(frames)+1)
	seqs := make([]uint64, len(frames))
	q.writeMu.Lock()
	defer q.writeMu.Unlock()
	q.mu.Lock()
	first := q.next
	q.next += uint64(len(frames))
	for range frames {
		q.window = append(q.window, false)
	}
	high := q.next
	q.mu.Unlock()
	for i, f := range frames {
		seqs[i] = first + uint64(i)
		value := make([]byte, storedHeader, storedHeader+len(f.Bytes))
		binary.BigEndian.PutUint32(value, uint32(shard))
		binary.BigEndian.PutUint32(value[4:], uint32(f.Items))
		ops = append(ops, storage.SetOperation(frameKey(seqs[i]), append(value, f.Bytes...)))
	}
	ops = append(ops, storage.SetOperation(highKey, encodeSeq(high)))
	if err := q.client.Batch(ctx, ops...); err != nil {
		q.settled(seqs, true)
		return nil, fmt.Errorf("%w: writing frames: %w", errStorage, err)
	}
	return seqs, nil
}

// settled marks seqs settled: their frames are deleted (when remove) and
// the low bound moves past every settled prefix.
func (q *persistentQueue) settled(seqs []uint64, remove bool) {
	q.mu.Lock()
	for _, seq := range seqs {
		if seq >= q.base && seq < q.next {
			q.window[seq-q.base] = true
		}
		if remove {
			q.deletes = append(q.deletes, frameKey(seq))
		}
	}
	n := 0
	for n < len(q.window) && q.window[n] {
		n++
	}
	if n > 0 {
		// Reslicing keeps the settled prefix in the backing array until an
		// append reallocates it; compacting on every advance would copy the
		// whole window each time.
		q.window = q.window[n:]
		q.base += uint64(n)
		if len(q.window) == 0 {
			q.window = nil
		}
	}
	q.mu.Unlock()
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// run deletes settled frames in batches and records the bounds, until
// close; the settle callbacks must not block on storage.
func (q *persistentQueue) run() {
	defer close(q.done)
	for {
		select {
		case <-q.kick:
			q.flush()
		case <-q.stop:
			q.flush()
			return
		}
	}
}

func (q *persistentQueue) flush() {
	q.writeMu.Lock()
	defer q.writeMu.Unlock()
	q.mu.Lock()
	deletes := q.deletes
	q.deletes = nil
	low, high := q.base, q.next
	q.mu.Unlock()
	ops := make([]*storage.Operation, 0, len(deletes)+2)
	for _, key := range deletes {
		ops = append(ops, storage.DeleteOperation(key))
	}
	ops = append(ops, storage.SetOperation(lowKey, encodeSeq(low)), storage.SetOperation(highKey, encodeSeq(high)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.client.Batch(ctx, ops...); err != nil {
		// The frames stay stored and are sent again by the next run.
		q.logger.Warn("Deleting acknowledged frames from storage failed; they will be sent again after a restart", zap.Int("frames", len(deletes)), zap.Error(err))
	}
}

// close writes the last deletions and bounds and closes the client.
func (q *persistentQueue) close(ctx context.Context) error {
	close(q.stop)
	<-q.done
	return q.client.Close(ctx)
}

// signalRoom tells replay that a Send may succeed now, without waiting.
func (q *persistentQueue) signalRoom() {
	select {
	case q.room <- struct{}{}:
	default:
	}
}

// onSettled returns the settle callback of a persisted Send: frames
// acknowledged or rejected for good are deleted; frames given up at
// shutdown are neither deleted nor marked settled, so the low bound stays
// below them and the next run sends them again. Either way the client no
// longer holds them, which room announces.
func (q *persistentQueue) onSettled(seqs []uint64, next func(error)) func(error) {
	return func(err error) {
		if err == nil || onlyRejected(err) {
			q.settled(seqs, true)
		}
		q.signalRoom()
		if next != nil {
			next(err)
		}
	}
}
