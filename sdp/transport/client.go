// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// Defaults for zero fields of ClientSettings.
const (
	// DefaultQueueBytes is the default bound on bytes held per client.
	DefaultQueueBytes = 64 << 20
	// DefaultDialTimeout is the default bound on one connection attempt.
	DefaultDialTimeout = 5 * time.Second
	// DefaultInitialBackoff is the default first wait between attempts.
	DefaultInitialBackoff = 100 * time.Millisecond
	// DefaultMaxBackoff is the default cap on the wait between attempts.
	DefaultMaxBackoff = 10 * time.Second
	// DefaultWriteTimeout is the default bound on one write.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultAckTimeout is the default time without Ack progress, while
	// frames are in flight, after which the connection is recycled.
	DefaultAckTimeout = 30 * time.Second
	// DefaultBatchBytes is the default BatchBytes: the most one write
	// carries.
	DefaultBatchBytes = maxWriteBytes
)

const (
	// maxWriteBytes bounds the frames coalesced into one vectored write, so
	// one write's deadline covers a bounded amount of data.
	maxWriteBytes  = 1 << 20
	maxWriteFrames = 256
)

// Frame is one frame to send.
type Frame struct {
	// Bytes is one complete encoded ResourceFrame. The client owns it from
	// Send until the frame settles: it rewrites the sequence in place each
	// time it writes the frame.
	Bytes []byte
	// Items is the number of spans, data points or log records in the
	// frame, for the Observer and the undelivered count.
	Items int
	// Key is the caller's routing key of the frame's resource. The client
	// does not read it; it keeps it beside the frame and hands it back with
	// the frame from CloseAndTake, so that the caller can assign the frame
	// again.
	Key uint64
}

// ClientSettings configures a Client. Zero durations and sizes take the
// Default values.
type ClientSettings struct {
	// Endpoint is the sidecar's endpoint (see ParseEndpoint).
	Endpoint string
	// Sender is the stable identity written in every Hello.
	Sender string
	// Shard is the shard this client carries; ShardCount the number of
	// shards the sender routes across. Shard must be below ShardCount.
	// The client stamps Shard on every frame it is given (sdp.SetShard),
	// so that a frame moved from another client matches this connection's
	// Hello.
	Shard, ShardCount uint32
	// QueueBytes bounds the bytes of frames held: queued plus in flight
	// until acknowledged.
	QueueBytes int
	// DialTimeout bounds one connection attempt.
	DialTimeout time.Duration
	// InitialBackoff and MaxBackoff bound the jittered exponential waits
	// between connection attempts and before sending frames again after an
	// Ack with status retry. Both start over from InitialBackoff once a
	// connection has made progress: its first Ack of any status. A retry
	// wait does not outlive its connection.
	InitialBackoff, MaxBackoff time.Duration
	// WriteTimeout bounds each write; a sidecar that stops reading for
	// longer loses its connection and the frames are sent again on a new
	// one.
	WriteTimeout time.Duration
	// AckTimeout recycles a connection on which frames are in flight but
	// no Ack has arrived for this long.
	AckTimeout time.Duration
	// Logger receives connection changes, rejections and shutdown losses;
	// nil logs nothing.
	Logger *slog.Logger
	// Observer is told about frames, acks and connections; nil is allowed.
	Observer Observer
	// TLS, if not nil, makes the client speak TLS with this configuration
	// (root CAs, a client certificate for sidecars that verify one). It is
	// meant for tcp:// endpoints; when ServerName is empty it is taken
	// from the endpoint's host.
	TLS *tls.Config
	// Linger, when positive, makes the client batch frames across Sends:
	// the writer holds queued frames until they add up to BatchBytes or
	// the oldest of them has waited Linger, then writes them all in one
	// write, so that the sidecar wakes per batch rather than per Send.
	// Frames held meanwhile count in QueueBytes as any other. Frames sent
	// again (after a lost connection or an Ack asking to retry), frames
	// queued before Flush and every frame once Shutdown has begun are
	// written without waiting, and so are the frames queued when a Send
	// finds the queue full. Zero writes each frame as soon as the writer
	// is free.
	Linger time.Duration
	// BatchBytes, with Linger, is the size at which held frames are
	// written without waiting for the rest of the linger. Zero means
	// DefaultBatchBytes; it is capped at half of QueueBytes, so that a
	// lingering batch never keeps Sends out of the queue.
	BatchBytes int
	// ReleaseFrame, if not nil, is called with a frame's bytes once its
	// sidecar has answered it (accepted or rejected), the write that sent
	// it has returned and the client holds it no more, so that the sender
	// may reuse the memory: a frame answered while its write is still
	// running (a sidecar that acknowledges before reading a frame whole)
	// is released when that write returns. Frames settled otherwise
	// (undelivered at shutdown, failed by a protocol error, taken back by
	// CloseAndTake) are not released: something may still hold them, so
	// they are left to the garbage collector. It is called without the
	// client's lock held, from the goroutine that reads Acks or the one
	// that writes, and must not block.
	ReleaseFrame func(frame []byte)
}

// Client sends one shard's frames to its sidecar with at-least-once
// delivery. Create it with NewClient, call Start once, and Shutdown when
// done. Send and QueuedBytes are safe for concurrent use.
type Client struct {
	set      ClientSettings
	network  string
	address  string
	hello    []byte
	log      *slog.Logger
	obs      Observer
	ctx      context.Context // cancelled when the connection loop must stop
	cancel   context.CancelFunc
	wake     chan struct{} // capacity 1: the writer has something to look at
	drained  chan struct{} // closed once closing and nothing is held
	done     chan struct{} // closed when the connection loop has returned
	shutdown chan struct{} // closed when Shutdown has finished

	mu       sync.Mutex
	pending  fifo // not written on the current connection, in Send order
	inflight fifo // written on the current connection, by sequence
	held     int  // bytes of pending and in-flight frames
	nextID   uint64
	seq      uint64 // last sequence written on the current connection
	// written is the last sequence whose write has returned on the
	// current connection: a frame beyond it may still be read by a write
	// in progress, however early its Ack came, so its release is parked
	// until that write returns.
	written      uint64
	parked       [][]byte
	conn         net.Conn // current connection; nil between connections
	started      bool
	closing      bool
	drainedShut  bool
	lastProgress time.Time // last Ack that settled frames, or when frames went in flight
	// answeredAt is when the sidecar last showed it answers for the frames
	// held: the last Ack that covered any, or the Send that ended a time
	// with none held. Unlike lastProgress it survives reconnections, so a
	// sidecar that accepts connections but never answers still ages.
	answeredAt time.Time
	retryAt    time.Time // after an Ack asked to retry: no writes before this
	retries    int       // consecutive Acks asking to retry
	acked      bool      // an Ack arrived on the current connection
	// pendingBytes is the bytes of the pending frames; flushID is the
	// last Send order that a Flush (or a Send that found the queue full)
	// made due without the rest of its linger.
	pendingBytes int
	flushID      uint64

	dialLog rateLimiter // warnings about failing dials

	// retryBackoff is the wait after the retries-th consecutive Ack asking
	// to retry; tests replace it to observe the attempts.
	retryBackoff func(retries int) time.Duration
}

// entry is one held frame.
type entry struct {
	frame []byte
	items int
	key   uint64
	id    uint64 // Send order, kept when frames return to the queue
	seq   uint64 // sequence on the current connection while in flight
	sent  bool   // handed to a connection before: the next write is a retransmission
	batch *batch
	// queued is when Send queued the frame, kept only with a linger.
	queued time.Time
}

// batch is the frames of one Send with a settled callback.
type batch struct {
	remaining int
	err       error
	settled   func(error)
}

// NewClient validates s and returns a Client that has not started.
func NewClient(s ClientSettings) (*Client, error) {
	network, address, err := ParseEndpoint(s.Endpoint)
	if err != nil {
		return nil, err
	}
	if network == "tcp" {
		if _, port, _ := net.SplitHostPort(address); port == "0" {
			return nil, invalidEndpoint(s.Endpoint, "a client needs a port other than 0")
		}
	}
	if s.ShardCount == 0 || s.Shard >= s.ShardCount {
		return nil, fmt.Errorf("transport: shard %d is not below shard count %d", s.Shard, s.ShardCount)
	}
	for _, v := range []struct {
		name string
		val  time.Duration
	}{{"DialTimeout", s.DialTimeout}, {"InitialBackoff", s.InitialBackoff}, {"MaxBackoff", s.MaxBackoff}, {"WriteTimeout", s.WriteTimeout}, {"AckTimeout", s.AckTimeout}, {"Linger", s.Linger}} {
		if v.val < 0 {
			return nil, fmt.Errorf("transport: %s is negative (%v)", v.name, v.val)
		}
	}
	if s.QueueBytes < 0 {
		return nil, fmt.Errorf("transport: QueueBytes is negative (%d)", s.QueueBytes)
	}
	if s.BatchBytes < 0 {
		return nil, fmt.Errorf("transport: BatchBytes is negative (%d)", s.BatchBytes)
	}
	s.QueueBytes = orDefault(s.QueueBytes, DefaultQueueBytes)
	s.BatchBytes = max(min(orDefault(s.BatchBytes, DefaultBatchBytes), s.QueueBytes/2), 1)
	s.DialTimeout = orDefault(s.DialTimeout, DefaultDialTimeout)
	s.InitialBackoff = orDefault(s.InitialBackoff, DefaultInitialBackoff)
	s.MaxBackoff = orDefault(s.MaxBackoff, DefaultMaxBackoff)
	s.MaxBackoff = max(s.MaxBackoff, s.InitialBackoff)
	s.WriteTimeout = orDefault(s.WriteTimeout, DefaultWriteTimeout)
	s.AckTimeout = orDefault(s.AckTimeout, DefaultAckTimeout)

	hello := sdp.Hello{ProtocolVersion: sdp.ProtocolVersion, Sender: s.Sender, Shard: s.Shard, ShardCount: s.ShardCount}
	helloFrame, err := hello.AppendFrame(nil)
	if err != nil {
		return nil, fmt.Errorf("transport: encoding Hello: %w", err)
	}
	if len(helloFrame) > sdp.MaxHelloFrameSize {
		return nil, fmt.Errorf("transport: a Sender of %d bytes makes a Hello of %d bytes, over the %d-byte limit for Hello frames (sdp.MaxHelloFrameSize); use at most %d bytes",
			len(s.Sender), len(helloFrame), sdp.MaxHelloFrameSize, sdp.MaxHelloSenderSize)
	}
	c := &Client{
		set:      s,
		network:  network,
		address:  address,
		hello:    helloFrame,
		log:      s.Logger,
		obs:      s.Observer,
		wake:     make(chan struct{}, 1),
		drained:  make(chan struct{}),
		done:     make(chan struct{}),
		shutdown: make(chan struct{}),
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.log = c.log.With(slog.String("endpoint", s.Endpoint), slog.Uint64("shard", uint64(s.Shard)))
	if c.obs == nil {
		c.obs = nopObserver{}
	}
	c.retryBackoff = func(retries int) time.Duration { return backoff(retries, s.InitialBackoff, s.MaxBackoff) }
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

func orDefault[T cmp.Ordered](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Start starts the goroutine that connects and sends. Calls after the
// first, or after Shutdown, do nothing.
func (c *Client) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started || c.closing {
		return
	}
	c.started = true
	go c.run()
}

// Send queues frames as a whole or not at all. It returns ErrQueueFull at
// once when they do not fit next to the frames already held (retry later),
// ErrExceedsQueue when they are larger than the whole queue, ErrClosed after
// Shutdown began, and an error wrapping ErrInvalidFrame when a frame is not
// one encoded ResourceFrame. On success the client owns the frames' bytes;
// it does not keep the frames slice itself, which the caller may reuse.
//
// settled, if not nil, is called once when every frame has settled: with nil
// when all were accepted, with an error wrapping ErrRejected when the
// sidecar refused any, or wrapping ErrUndelivered when Shutdown gave up on
// any. It is called from the client's goroutines (or from Send itself when
// frames is empty) and must not block or call Shutdown; it may call Send.
func (c *Client) Send(frames []Frame, settled func(error)) error {
	size := 0
	for i, f := range frames {
		if err := checkFrame(f.Bytes); err != nil {
			return fmt.Errorf("frame %d: %w", i, err)
		}
		size += len(f.Bytes)
	}
	if size > c.set.QueueBytes {
		return fmt.Errorf("%w: %d bytes in one Send, the queue holds %d", ErrExceedsQueue, size, c.set.QueueBytes)
	}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return ErrClosed
	}
	if len(frames) == 0 {
		c.mu.Unlock()
		if settled != nil {
			settled(nil)
		}
		return nil
	}
	if c.held+size > c.set.QueueBytes {
		wake := c.flushLocked()
		c.mu.Unlock()
		if wake {
			c.signal()
		}
		return ErrQueueFull
	}
	if c.held == 0 {
		c.answeredAt = time.Now()
	}
	var b *batch
	if settled != nil {
		b = &batch{remaining: len(frames), settled: settled}
	}
	var queued time.Time
	if c.set.Linger > 0 {
		queued = time.Now()
	}
	wake := c.lingerWakeLocked(size)
	entries := make([]entry, len(frames))
	for i, f := range frames {
		// The frame was checked above; SetShard cannot fail on it.
		_ = sdp.SetShard(f.Bytes, c.set.Shard)
		c.nextID++
		entries[i] = entry{frame: f.Bytes, items: f.Items, key: f.Key, id: c.nextID, batch: b, queued: queued}
		c.pending.push(&entries[i])
	}
	c.held += size
	c.mu.Unlock()
	if wake {
		c.signal()
	}
	return nil
}

// checkFrame accepts exactly one complete encoded ResourceFrame.
func checkFrame(b []byte) error {
	h, err := sdp.ParseHeader(b)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidFrame, err)
	}
	if h.Type != sdp.TypeResourceFrame {
		return fmt.Errorf("%w: type %d is not a ResourceFrame", ErrInvalidFrame, h.Type)
	}
	if uint64(len(b)) != sdp.HeaderSize+uint64(h.Length) {
		return fmt.Errorf("%w: %d bytes hold a frame of %d", ErrInvalidFrame, len(b), sdp.HeaderSize+uint64(h.Length))
	}
	if _, err := sdp.Sequence(b); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidFrame, err)
	}
	return nil
}

// Unanswered returns how long, as of now, the client has held frames
// without its sidecar answering any of them: the time since the last Ack
// that covered a held frame (whatever its status), or since the frames
// began to be held when none has come since. It is zero when no frame is
// held. A sidecar that is stopped, hung or unreachable ages steadily,
// across reconnections; one that answers "retry later" does not.
func (c *Client) Unanswered(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held == 0 {
		return 0
	}
	return max(now.Sub(c.answeredAt), 0)
}

// QueuedBytes returns the bytes of frames held: queued or in flight and not
// yet acknowledged. It never exceeds QueueBytes.
func (c *Client) QueuedBytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held
}

// signal wakes the writer without blocking.
func (c *Client) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}
