// SPDX-License-Identifier: Apache-2.0

package transport

import (
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
	// FreeFrameBytes is what each connection may hold of the bytes it
	// received without drawing on the Server's read budget: it reads in
	// bulk, as much as has arrived, into that much space, and hands every
	// frame that lies whole in it to the Handler where it lies. Frames up
	// to this size (header included) never wait for budget; of a larger
	// frame, the first FreeFrameBytes of its payload are free too.
	//
	// 128 KiB holds eleven of the end-to-end benchmark's 11 KiB trace
	// frames, or hundreds of small ones, so the cost of a read system
	// call is spread thin, while a connection's memory stays at 256 KiB:
	// this space is mapped outside the Go heap, and replaces both the
	// 64 KiB read buffer and the 64 KiB of frame space that a connection
	// held before it read in bulk.
	FreeFrameBytes = 128 << 10
	// readStep is how much budget a connection takes at a time, and so the
	// most a partial frame holds beyond the bytes it received.
	readStep = 64 << 10
	// defaultQuietGrace is how long a connection must have received
	// nothing before another may close it to take its place or its
	// budget (Server.quietGrace overrides it in tests).
	defaultQuietGrace = time.Second
)

// frameReader reads the frames of one connection after its Hello. Every
// read takes as much as has arrived, up to FreeFrameBytes, into the
// connection's frame space; a frame that lies whole there is returned in
// place, without a copy. A frame larger than that space is moved to its
// start and the rest of its payload beyond FreeFrameBytes is read in
// readStep steps, each taken from the Server's read budget before it is
// read. From the first read a frame needs, it has FrameTimeout to arrive
// whole. Clocks and deadlines are read and set once per read, not per
// frame.
type frameReader struct {
	s    *Server
	conn net.Conn
	st   *connState
	max  int // payload limit
	buf  *frameBuf
	// start and end delimit the bytes read but not yet returned, in the
	// first FreeFrameBytes of buf.
	start, end int
	used       int       // bytes of buf written by the last frame larger than FreeFrameBytes
	held       bool      // the connection may hold read budget
	served     bool      // the Server knows a frame of it was handled
	busy       bool      // st is marked busy with the frames of the last read
	deadline   time.Time // the read deadline set on conn
}

// next reads a frame; the payload is valid until done is called.
func (r *frameReader) next(idle, frameTimeout time.Duration) (sdp.Header, []byte, error) {
	if r.buf == nil {
		var err error
		if r.buf, err = newFrameBuf(max(r.max, FreeFrameBytes)); err != nil {
			return sdp.Header{}, nil, fmt.Errorf("allocating the frame buffer: %w", err)
		}
	}
	var frameDeadline time.Time // set by the first read the frame at start needs
	for {
		space := r.buf.bytes(FreeFrameBytes)
		size := 0 // of the frame at start, header included, once its header is in
		if r.end-r.start >= sdp.HeaderSize {
			h, err := sdp.ParseHeader(space[r.start:r.end])
			if err != nil {
				return sdp.Header{}, nil, protocolError("reading a frame: %w", err)
			}
			if uint64(h.Length) > uint64(r.max) {
				return sdp.Header{}, nil, protocolError("reading a frame: %w", &sdp.FrameSizeError{Header: h, Limit: r.max + sdp.HeaderSize})
			}
			size = sdp.HeaderSize + int(h.Length)
			if r.end-r.start >= size {
				payload := space[r.start+sdp.HeaderSize : r.start+size : r.start+size]
				r.start += size
				if r.start == r.end {
					// The next read starts at the beginning again; it
					// happens only after the Handler is done with payload.
					r.start, r.end = 0, 0
				}
				r.markBusy()
				return h, payload, nil
			}
			if size > FreeFrameBytes {
				return r.large(h, frameDeadline, frameTimeout)
			}
		}
		// The frame at start is not whole: read more.
		now := time.Now()
		r.st.touchAt(now)
		r.busy = false
		deadline, kind, what := now.Add(idle), connIdleTimeout, "waiting for a frame"
		if r.end > r.start {
			if frameDeadline.IsZero() {
				frameDeadline = now.Add(frameTimeout)
			}
			deadline, kind, what = frameDeadline, connFrameTimeout, "reading a frame"
			if (size == 0 && r.start+sdp.HeaderSize > FreeFrameBytes) || r.start+size > FreeFrameBytes {
				// The frame does not fit where it starts.
				r.end = copy(space, space[r.start:r.end])
				r.start = 0
			}
		}
		if err := r.setDeadline(deadline); err != nil {
			return sdp.Header{}, nil, err
		}
		n, err := r.conn.Read(space[r.end:])
		r.end += n
		if n > 0 || err == nil {
			// An error that came with bytes comes again on the next read.
			continue
		}
		// Ifs rather than a switch: Go's coverage profile has no block for
		// case expressions, so mutation testing could not run the tests
		// against mutants of these conditions.
		if r.end == r.start && errors.Is(err, io.EOF) {
			return sdp.Header{}, nil, io.EOF
		}
		if r.end-r.start >= sdp.HeaderSize {
			err = unexpectedEnd(err, "frame payload")
		} else if r.end > r.start {
			err = unexpectedEnd(err, "frame header")
		}
		return sdp.Header{}, nil, readFailure(err, kind, what)
	}
}

// large reads a frame larger than FreeFrameBytes whose header is at start:
// what arrived of its payload moves to the start of buf, the rest of its
// first FreeFrameBytes is read free, and each readStep beyond takes read
// budget first. It reads nothing past the frame.
func (r *frameReader) large(h sdp.Header, frameDeadline time.Time, frameTimeout time.Duration) (sdp.Header, []byte, error) {
	if frameDeadline.IsZero() {
		frameDeadline = time.Now().Add(frameTimeout)
	}
	if err := r.setDeadline(frameDeadline); err != nil {
		return sdp.Header{}, nil, err
	}
	n := int(h.Length)
	space := r.buf.bytes(FreeFrameBytes)
	got := copy(space, space[r.start+sdp.HeaderSize:r.end])
	r.start, r.end = 0, 0
	free := min(n, FreeFrameBytes)
	r.used = free
	if _, err := io.ReadFull(r.conn, r.buf.bytes(free)[got:]); err != nil {
		return sdp.Header{}, nil, readFailure(unexpectedEnd(err, "frame payload"), connFrameTimeout, "reading a frame")
	}
	got = free
	r.st.touch()
	for got < n {
		step := min(readStep, n-got)
		r.held = true
		if err := r.s.takeBudget(r.st, step, frameDeadline); err != nil {
			return sdp.Header{}, nil, err
		}
		r.used = got + step
		if _, err := io.ReadFull(r.conn, r.buf.bytes(got + step)[got:]); err != nil {
			return sdp.Header{}, nil, readFailure(unexpectedEnd(err, "frame payload"), connFrameTimeout, "reading a frame")
		}
		got += step
		r.st.touch()
	}
	r.busy = false
	r.markBusy()
	return h, r.buf.bytes(n), nil
}

// markBusy marks the connection busy from now until its next read: a
// connection whose frames are being handled is not quiet, however long
// the Handler takes (an fsync, a forward that pushes back), and must not
// qualify for eviction meanwhile. The mark costs one store per read, not
// a clock reading per frame.
func (r *frameReader) markBusy() {
	if !r.busy {
		r.st.markBusy()
		r.busy = true
	}
}

// setDeadline sets conn's read deadline unless it is set to d already.
func (r *frameReader) setDeadline(d time.Time) error {
	if d.Equal(r.deadline) {
		return nil
	}
	if err := r.conn.SetReadDeadline(d); err != nil {
		return err
	}
	r.deadline = d
	return nil
}

// frameBuffered reports whether a whole frame (or a header that is
// invalid) waits in the frame space, so that next cannot block.
func (r *frameReader) frameBuffered() bool {
	if r.buf == nil || r.end-r.start < sdp.HeaderSize {
		return false
	}
	h, err := sdp.ParseHeader(r.buf.bytes(FreeFrameBytes)[r.start:r.end])
	return err != nil || uint64(r.end-r.start) >= sdp.HeaderSize+uint64(h.Length)
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
