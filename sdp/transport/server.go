// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// Defaults for zero fields of Server.
const (
	// DefaultAckWriteTimeout bounds the write of an Ack.
	DefaultAckWriteTimeout = 10 * time.Second
	// DefaultMaxConns bounds the connections a Server holds open at once.
	DefaultMaxConns = 256
	// DefaultHelloTimeout bounds the wait for a connection's Hello (and,
	// with TLS, its handshake).
	DefaultHelloTimeout = 10 * time.Second
	// DefaultIdleTimeout bounds the wait for the first byte of each frame
	// after the Hello.
	DefaultIdleTimeout = 5 * time.Minute
)

// Handler takes the frames that a Server receives.
type Handler interface {
	// HandleFrame takes one frame of the connection that hello opened and
	// returns the Ack status and, when it is not AckAccepted, a detail
	// saying why. It is called sequentially per connection (concurrently
	// across connections); f.OTLP is valid only during the call. The
	// Server has checked f against the Hello: f.Shard is hello.Shard and
	// f.Signal is one the schema defines (1 to 4).
	HandleFrame(hello *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string)
}

// Syncer is implemented by a Handler that makes what it accepted durable
// in batches. Before a Server sends Acks that accept frames, it calls Sync
// once for all the frames handled since the previous call on that
// connection; when Sync fails, those frames are answered with AckRetry
// instead, and the error text becomes the Ack detail.
type Syncer interface {
	Sync(hello *sdp.Hello) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(hello *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string)

// HandleFrame calls fn(hello, f).
func (fn HandlerFunc) HandleFrame(hello *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string) {
	return fn(hello, f)
}

// Server is the sidecar's end of the transport. Each connection must open
// with a Hello of protocol version 1 and then carry ResourceFrames numbered
// 1, 2, 3, ..., each of the Hello's shard; the server answers each with an
// Ack. A connection that breaks the protocol, sends a malformed or
// oversized frame, or stays silent past a timeout is closed with a logged
// reason; the others carry on.
//
// Memory is bounded by the configuration: before its Hello a connection
// holds a few KiB (the Hello is read under sdp.MaxHelloFrameSize), after it
// a few KiB of buffers plus FreeFrameBytes of read space, where frames are
// read in bulk and handed to the Handler in place; the rest of every frame
// larger than that is read in steps taken from ReadBudget, which all
// connections share, so a partial frame holds what it received plus at
// most one step and all of them together at most ReadBudget. At most
// MaxConns connections are open (one more while it waits for its Hello).
// On unix systems frames are read into memory mappings whose pages beyond
// the read space go back to the system as soon as a frame is handled, and
// all of them when its connection closes. Set the fields before Serve and
// do not copy a Server after first use.
type Server struct {
	// Handler takes the frames.
	Handler Handler
	// Logger receives connection events and protocol errors; nil logs
	// nothing. Warnings caused by peers are rate-limited, and strings a
	// peer chose are cut to MaxLoggedPeerString bytes.
	Logger *slog.Logger
	// MaxFrameBytes bounds a frame, header included; zero means
	// sdp.DefaultMaxFrameSize, enough for the largest ResourceFrame.
	MaxFrameBytes int
	// MaxConns bounds the connections past their Hello open at once across
	// all listeners. At the limit, a new connection takes the place of the
	// one that has waited longest for its Hello; when every connection is
	// past its Hello, the new one is let in on probation (one at a time),
	// and once it sends a valid Hello it takes the place of the least
	// useful connection: one that never completed a frame before one that
	// did, then the one that has received nothing for the longest,
	// provided that is at least a second; else it is refused. Evictions
	// and refusals are counted.
	// Zero means DefaultMaxConns.
	MaxConns int
	// HelloTimeout bounds the time from accepting a connection to having
	// read its Hello; zero means DefaultHelloTimeout.
	HelloTimeout time.Duration
	// IdleTimeout closes a connection on which no frame starts for this
	// long; zero means DefaultIdleTimeout. A Client reconnects at once,
	// logging at info level when it had nothing in flight.
	IdleTimeout time.Duration
	// FrameTimeout closes a connection whose frame has not arrived whole
	// this long after its first byte; zero means DefaultFrameTimeout.
	FrameTimeout time.Duration
	// ReadBudget bounds the bytes that the frames in progress on all
	// connections hold beyond FreeFrameBytes each; zero means
	// DefaultReadBudget. A connection that needs more than is free closes
	// the connection holding budget that has received nothing for the
	// longest, if that is at least a second, and otherwise waits for
	// budget within its FrameTimeout. It must be at least MaxFrameBytes,
	// so that one whole frame always fits.
	ReadBudget int
	// AckDelay delays every Ack, to demonstrate or test a slow sidecar.
	AckDelay time.Duration
	// AckWriteTimeout bounds each Ack write; zero means
	// DefaultAckWriteTimeout.
	AckWriteTimeout time.Duration

	mu        sync.Mutex
	closed    bool
	quit      chan struct{}
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]*connState
	wg        sync.WaitGroup

	// budgetUsed is the read budget the connections hold; budgetFreed is
	// closed (and replaced) whenever some of it is given back.
	budgetUsed  int64
	budgetFreed chan struct{}
	// budgetEvicting is the part of budgetUsed held by evicted
	// connections that have not given it back yet.
	budgetEvicting int64
	// quietGrace overrides defaultQuietGrace in tests.
	quietGrace time.Duration

	stats       serverCounters
	refusedLog  rateLimiter
	protocolLog rateLimiter
	failLog     rateLimiter
}

// ServerStats counts what a Server did with its connections.
type ServerStats struct {
	// Active is the number of connections open now; AwaitingHello how
	// many of them have not sent their Hello yet.
	Active        int `json:"active"`
	AwaitingHello int `json:"awaiting_hello"`
	// Accepted counts connections accepted and served.
	Accepted uint64 `json:"accepted"`
	// Refused counts connections closed on accept because MaxConns were
	// open, all of them past their Hello.
	Refused uint64 `json:"refused"`
	// Evicted counts connections still waiting for their Hello that were
	// closed to make room for a new connection at MaxConns.
	Evicted uint64 `json:"evicted"`
	// ProtocolErrors counts connections closed because the peer broke the
	// protocol: no Hello first, an oversized or malformed frame, a wrong
	// shard, signal or sequence.
	ProtocolErrors uint64 `json:"protocol_errors"`
	// HelloTimeouts counts connections closed because no Hello came
	// within HelloTimeout.
	HelloTimeouts uint64 `json:"hello_timeouts"`
	// IdleTimeouts counts connections closed because no frame came within
	// IdleTimeout.
	IdleTimeouts uint64 `json:"idle_timeouts"`
	// FrameTimeouts counts connections closed because a frame did not
	// arrive whole within FrameTimeout of its first byte.
	FrameTimeouts uint64 `json:"frame_timeouts"`
	// ReadBudgetBytes is the read budget the frames in progress hold now.
	ReadBudgetBytes int64 `json:"read_budget_bytes"`
}

type serverCounters struct {
	accepted, refused, evicted, protocolErrors, helloTimeouts, idleTimeouts, frameTimeouts atomic.Uint64
}

// Stats returns the counts so far.
func (s *Server) Stats() ServerStats {
	s.mu.Lock()
	active, awaiting := len(s.conns), 0
	for _, st := range s.conns {
		if !st.hello {
			awaiting++
		}
	}
	budget := s.budgetUsed
	s.mu.Unlock()
	return ServerStats{
		Active:          active,
		AwaitingHello:   awaiting,
		Accepted:        s.stats.accepted.Load(),
		Refused:         s.stats.refused.Load(),
		Evicted:         s.stats.evicted.Load(),
		ProtocolErrors:  s.stats.protocolErrors.Load(),
		HelloTimeouts:   s.stats.helloTimeouts.Load(),
		IdleTimeouts:    s.stats.idleTimeouts.Load(),
		FrameTimeouts:   s.stats.frameTimeouts.Load(),
		ReadBudgetBytes: budget,
	}
}

func (s *Server) initLocked() {
	if s.quit == nil {
		s.quit = make(chan struct{})
		s.listeners = make(map[net.Listener]struct{})
		s.conns = make(map[net.Conn]*connState)
		s.budgetFreed = make(chan struct{})
	}
}

func (s *Server) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// Serve accepts connections on l and serves each on its own goroutine until
// Shutdown, when it returns ErrServerClosed. It closes l when it returns.
// One Server may serve several listeners; MaxConns counts them together.
func (s *Server) Serve(l net.Listener) error {
	if s.Handler == nil {
		l.Close()
		return errors.New("transport: Server has no Handler")
	}
	for _, v := range []struct {
		name string
		val  time.Duration
	}{{"HelloTimeout", s.HelloTimeout}, {"IdleTimeout", s.IdleTimeout}, {"FrameTimeout", s.FrameTimeout}, {"AckDelay", s.AckDelay}, {"AckWriteTimeout", s.AckWriteTimeout}} {
		if v.val < 0 {
			l.Close()
			return fmt.Errorf("transport: Server.%s is negative (%v)", v.name, v.val)
		}
	}
	if s.MaxConns < 0 || s.MaxFrameBytes < 0 || s.ReadBudget < 0 {
		l.Close()
		return fmt.Errorf("transport: Server.MaxConns (%d), MaxFrameBytes (%d) and ReadBudget (%d) must not be negative", s.MaxConns, s.MaxFrameBytes, s.ReadBudget)
	}
	if budget, frame := orDefault(s.ReadBudget, DefaultReadBudget), s.maxFrameBytes(); budget < frame {
		l.Close()
		return fmt.Errorf("transport: Server.ReadBudget (%d) is less than one frame of MaxFrameBytes (%d)", budget, frame)
	}
	maxConns := orDefault(s.MaxConns, DefaultMaxConns)
	s.mu.Lock()
	s.initLocked()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
		l.Close()
	}()

	var pause time.Duration
	for {
		conn, err := l.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of file descriptors and the like: wait, then carry on.
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			s.logger().Warn("Accepting a sidecar connection failed; retrying", slog.Any("error", err), slog.Duration("pause", pause))
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-s.quit:
				t.Stop()
			}
			continue
		}
		pause = 0
		conn = takeSocket(conn)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			conn.Close()
			return ErrServerClosed
		}
		// At the limit a connection still waiting for its Hello makes
		// room; failing that, the newcomer is let in on probation (one at
		// a time, as it waits for its Hello) and its Hello decides.
		if len(s.conns) >= maxConns && !s.evictOldestWaitingLocked() && len(s.conns) > maxConns {
			s.mu.Unlock()
			conn.Close()
			s.stats.refused.Add(1)
			s.refusedLog.warn(s.logger(), "Refused a sidecar connection: the connection limit is reached",
				slog.Int("max_conns", maxConns), slog.String("remote", conn.RemoteAddr().String()))
			continue
		}
		st := &connState{accepted: time.Now()}
		st.touch()
		s.conns[conn] = st
		s.wg.Add(1)
		s.mu.Unlock()
		s.stats.accepted.Add(1)
		go s.serveConn(conn)
	}
}

func (s *Server) maxFrameBytes() int {
	return min(max(orDefault(s.MaxFrameBytes, sdp.DefaultMaxFrameSize), sdp.HeaderSize), sdp.HeaderSize+sdp.MaxValueSize)
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Shutdown closes the listeners and every connection, then waits for the
// connections' goroutines (a Handler call in progress finishes first) or
// for ctx. Frames received but not acknowledged are sent again by the
// clients on their next connection.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.initLocked()
	if !s.closed {
		s.closed = true
		close(s.quit)
	}
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("transport: server shutdown: %w", ctx.Err())
	}
}
