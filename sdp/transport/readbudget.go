// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

const (
	// DefaultReadBudget bounds the frame bytes that all of a Server's
	// connections hold together beyond their FreeFrameBytes each.
	DefaultReadBudget = 64 << 20
	// DefaultFrameTimeout bounds the time from the first byte of a frame to
	// its last.
	DefaultFrameTimeout = 30 * time.Second
	// FreeFrameBytes is the part of each frame's payload that a connection
	// reads without drawing on the Server's read budget: frames this small
	// never wait for budget, and every connection may hold this much.
	FreeFrameBytes = 64 << 10
	// readStep is how much budget a connection takes at a time, and so the
	// most a partial frame holds beyond the bytes it received.
	readStep = 64 << 10
	// defaultQuietGrace is how long a connection must have received
	// nothing before another may close it to take its place or its
	// budget (Server.quietGrace overrides it in tests).
	defaultQuietGrace = time.Second
)

// frameReader reads the frames of one connection after its Hello: from the
// first byte of a frame it has FrameTimeout to arrive whole, and a payload
// beyond FreeFrameBytes is read in readStep steps, each taken from the
// Server's read budget before it is read.
type frameReader struct {
	s      *Server
	conn   net.Conn
	st     *connState
	in     *bufio.Reader
	max    int // payload limit
	buf    *frameBuf
	used   int  // bytes of buf written by the last frame
	held   bool // the connection may hold read budget
	served bool // the Server knows a frame of it was handled
	header [sdp.HeaderSize]byte
}

// next reads a frame; the payload is valid until done is called.
func (r *frameReader) next(idle, frameTimeout time.Duration) (sdp.Header, []byte, error) {
	if !frameBuffered(r.in) {
		if err := r.conn.SetReadDeadline(time.Now().Add(idle)); err != nil {
			return sdp.Header{}, nil, err
		}
		if _, err := r.in.Peek(1); err != nil {
			if errors.Is(err, io.EOF) {
				return sdp.Header{}, nil, io.EOF
			}
			return sdp.Header{}, nil, readFailure(err, connIdleTimeout, "waiting for a frame")
		}
		r.st.touch()
		if err := r.conn.SetReadDeadline(time.Now().Add(frameTimeout)); err != nil {
			return sdp.Header{}, nil, err
		}
	}
	deadline := time.Now().Add(frameTimeout)
	if _, err := io.ReadFull(r.in, r.header[:]); err != nil {
		return sdp.Header{}, nil, readFailure(unexpectedEnd(err, "frame header"), connFrameTimeout, "reading a frame")
	}
	h, err := sdp.ParseHeader(r.header[:])
	if err != nil {
		return sdp.Header{}, nil, protocolError("reading a frame: %w", err)
	}
	if uint64(h.Length) > uint64(r.max) {
		return sdp.Header{}, nil, protocolError("reading a frame: %w", &sdp.FrameSizeError{Header: h, Limit: r.max + sdp.HeaderSize})
	}
	n := int(h.Length)
	if r.buf == nil {
		if r.buf, err = newFrameBuf(r.max); err != nil {
			return sdp.Header{}, nil, fmt.Errorf("allocating the frame buffer: %w", err)
		}
	}
	got := min(n, FreeFrameBytes)
	r.used = got
	if _, err := io.ReadFull(r.in, r.buf.bytes(got)); err != nil {
		return sdp.Header{}, nil, readFailure(unexpectedEnd(err, "frame payload"), connFrameTimeout, "reading a frame")
	}
	r.st.touch()
	for got < n {
		step := min(readStep, n-got)
		r.held = true
		if err := r.s.takeBudget(r.st, step, deadline); err != nil {
			return sdp.Header{}, nil, err
		}
		r.used = got + step
		if _, err := io.ReadFull(r.in, r.buf.bytes(got + step)[got:]); err != nil {
			return sdp.Header{}, nil, readFailure(unexpectedEnd(err, "frame payload"), connFrameTimeout, "reading a frame")
		}
		got += step
		r.st.touch()
	}
	return h, r.buf.bytes(n), nil
}

// done gives back what the last frame held beyond FreeFrameBytes: the
// pages first, then the budget that covered them.
func (r *frameReader) done() {
	if r.used > FreeFrameBytes {
		r.buf.release(FreeFrameBytes, r.used)
	}
	r.used = 0
	// The Server's lock is taken only when there is something to tell it,
	// not on every small frame.
	if r.held || !r.served {
		r.s.giveBackBudget(r.st, true)
		r.held, r.served = false, true
	}
}

// close frees the connection's frame space and then its budget: in that
// order, so that the pages are gone before another connection may take the
// budget that covered them.
func (r *frameReader) close() {
	if r.buf != nil {
		r.buf.free()
	}
	r.s.giveBackBudget(r.st, false)
}

// unexpectedEnd marks a stream that ended inside a frame.
func unexpectedEnd(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: stream ended inside the %s: %w", sdp.ErrUnexpectedEnd, what, io.ErrUnexpectedEOF)
	}
	return err
}

// takeBudget takes n bytes of the read budget for st's frame. When the
// budget is spent it closes the least useful other connection holding
// budget (see leastUsefulLocked), and waits for budget until deadline. A frame that cannot get its
// budget by its deadline ends its connection as a frame timeout.
func (s *Server) takeBudget(st *connState, n int, deadline time.Time) error {
	limit := int64(orDefault(s.ReadBudget, DefaultReadBudget))
	grace := s.quietGraceOrDefault()
	for {
		s.mu.Lock()
		if st.evicted {
			s.mu.Unlock()
			return errEvicted
		}
		if s.budgetUsed+int64(n) <= limit {
			s.budgetUsed += int64(n)
			st.budget += int64(n)
			s.mu.Unlock()
			return nil
		}
		if s.closed {
			s.mu.Unlock()
			return errors.New("server shutting down")
		}
		// Budget that connections closed already will give back covers
		// some waiters: evict only for the shortfall beyond it, so that
		// waiters do not close every holder at once.
		if s.budgetUsed-s.budgetEvicting+int64(n) > limit {
			victim, vst := s.leastUsefulLocked(func(o *connState) bool { return o != st && o.budget > 0 && !o.evicted })
			if vst != nil {
				s.evictLocked(victim, vst)
			}
		}
		freed := s.budgetFreed
		s.mu.Unlock()
		wait := time.Until(deadline)
		if wait <= 0 {
			return &connError{kind: connFrameTimeout, err: fmt.Errorf("reading a frame: no read budget came free within the frame timeout (%d bytes in use by all connections)", limit)}
		}
		t := time.NewTimer(min(wait, grace/4+time.Millisecond))
		select {
		case <-freed:
		case <-t.C:
		case <-s.quit:
		}
		t.Stop()
	}
}

// giveBackBudget returns all the budget st holds and wakes the connections
// waiting for some; served marks st as having completed a frame.
func (s *Server) giveBackBudget(st *connState, served bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st.served = st.served || served
	if st.budget == 0 {
		return
	}
	s.budgetUsed -= st.budget
	if st.evicted {
		s.budgetEvicting -= st.budget
	}
	st.budget = 0
	close(s.budgetFreed)
	s.budgetFreed = make(chan struct{})
}
