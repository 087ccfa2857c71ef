// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// maxPendingAcks bounds the Acks a connection holds back while it reads
// frames that are already buffered, so that they go out in one write.
const maxPendingAcks = 256

// connError is why a connection ended; kind says which counter it feeds.
type connError struct {
	kind connErrorKind
	err  error
}

type connErrorKind uint8

const (
	connFailed connErrorKind = iota // the connection itself failed (reset, write timeout)
	connProtocol
	connHelloTimeout
	connIdleTimeout
	connFrameTimeout
)

func (e *connError) Error() string { return e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

func protocolError(format string, args ...any) error {
	return &connError{kind: connProtocol, err: fmt.Errorf(format, args...)}
}

// readFailure classifies an error of reading a frame.
func readFailure(err error, timeout connErrorKind, what string) error {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return &connError{kind: timeout, err: fmt.Errorf("%s: %w", what, err)}
	case errors.Is(err, sdp.ErrUnexpectedEnd) && errors.Is(err, io.ErrUnexpectedEOF):
		// The peer went away inside a frame.
		return &connError{kind: connFailed, err: fmt.Errorf("%s: %w", what, err)}
	case isSDPError(err):
		return &connError{kind: connProtocol, err: fmt.Errorf("%s: %w", what, err)}
	}
	return &connError{kind: connFailed, err: fmt.Errorf("%s: %w", what, err)}
}

func isSDPError(err error) bool {
	for _, s := range []error{sdp.ErrBadMagic, sdp.ErrBadVersion, sdp.ErrUnknownType, sdp.ErrTooLarge, sdp.ErrInvalidData, sdp.ErrInvalidUTF8, sdp.ErrArrayTooLarge, sdp.ErrTooManyElements} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

func (s *Server) serveConn(conn net.Conn) {
	defer s.wg.Done()
	defer func() {
		conn.Close()
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
	}()
	log := s.logger().With(slog.String("local", conn.LocalAddr().String()), slog.String("remote", conn.RemoteAddr().String()))
	err := s.serveFrames(conn, &log)
	if err == nil {
		log.Debug("Sidecar connection ended by the client")
		return
	}
	if s.isClosed() {
		log.Debug("Sidecar connection closed by shutdown", slog.Any("error", err))
		return
	}
	if errors.Is(err, errRefused) {
		s.refusedLog.warn(log, "Refused a sidecar connection: the connection limit is reached", slog.Any("error", err))
		return
	}
	if !s.stillTracked(conn) {
		s.refusedLog.warn(log, "Closed a sidecar connection to make room for another (connection limit or read budget)", slog.Any("error", err))
		return
	}
	var ce *connError
	kind := connFailed
	if errors.As(err, &ce) {
		kind = ce.kind
	}
	switch kind {
	case connProtocol:
		s.stats.protocolErrors.Add(1)
		s.protocolLog.warn(log, "Closing sidecar connection: the peer broke the protocol", slog.Any("error", err))
	case connHelloTimeout:
		s.stats.helloTimeouts.Add(1)
		s.protocolLog.warn(log, "Closing sidecar connection: no Hello within the Hello timeout", slog.Any("error", err))
	case connIdleTimeout:
		s.stats.idleTimeouts.Add(1)
		log.Info("Closing idle sidecar connection", slog.Any("error", err))
	case connFrameTimeout:
		s.stats.frameTimeouts.Add(1)
		s.protocolLog.warn(log, "Closing sidecar connection: a frame did not arrive whole within the frame timeout", slog.Any("error", err))
	default:
		s.failLog.warn(log, "Sidecar connection failed", slog.Any("error", err))
	}
}

// stillTracked reports whether conn is still among the Server's
// connections, that is, was not evicted.
func (s *Server) stillTracked(conn net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[conn] != nil
}

// readHello reads the first frame of a connection, which must be a Hello,
// under sdp.MaxHelloFrameSize and without buffering beyond it.
func readHello(conn net.Conn) (sdp.Hello, error) {
	var hello sdp.Hello
	var header [sdp.HeaderSize]byte
	if _, err := io.ReadFull(conn, header[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return hello, io.EOF
		}
		return hello, helloFailure(err)
	}
	h, err := sdp.ParseHeader(header[:])
	if err != nil {
		return hello, protocolError("reading Hello: %w", err)
	}
	if h.Type != sdp.TypeHello {
		return hello, protocolError("first frame is a %s, want Hello", sdp.TypeName(h.Type))
	}
	if uint64(h.Length) > sdp.MaxHelloFrameSize-sdp.HeaderSize {
		return hello, protocolError("reading Hello: %w (sdp.MaxHelloFrameSize, the limit for a connection's first frame)",
			&sdp.FrameSizeError{Header: h, Limit: sdp.MaxHelloFrameSize})
	}
	payload := make([]byte, h.Length)
	if _, err := io.ReadFull(conn, payload); err != nil {
		return hello, helloFailure(err)
	}
	if err := hello.DecodePayload(payload); err != nil {
		return hello, protocolError("decoding Hello: %w", err)
	}
	if hello.ProtocolVersion != sdp.ProtocolVersion {
		return hello, protocolError("the Hello has protocol version %d, want %d", hello.ProtocolVersion, sdp.ProtocolVersion)
	}
	if hello.ShardCount == 0 || hello.Shard >= hello.ShardCount {
		return hello, protocolError("the Hello has shard %d of %d", hello.Shard, hello.ShardCount)
	}
	return hello, nil
}

// helloFailure classifies an error of reading the Hello: a timeout, or else
// a peer that did not open the connection properly (a failed TLS
// handshake, a reset, a stream that ends inside the Hello), which counts
// as a protocol error.
func helloFailure(err error) error {
	err = readFailure(err, connHelloTimeout, "reading Hello")
	if ce := err.(*connError); ce.kind == connFailed {
		ce.kind = connProtocol
	}
	return err
}

type pendingAck struct {
	seq    uint64
	status sdp.AckStatus
	detail string
}

// serveFrames runs the protocol on conn; nil means the client closed the
// connection between frames.
func (s *Server) serveFrames(conn net.Conn, log **slog.Logger) error {
	if err := conn.SetReadDeadline(time.Now().Add(orDefault(s.HelloTimeout, DefaultHelloTimeout))); err != nil {
		return err
	}
	hello, err := readHello(conn)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	if err := s.helloRead(conn, orDefault(s.MaxConns, DefaultMaxConns)); err != nil {
		return err
	}
	*log = (*log).With(slog.String("sender", Truncate(hello.Sender)), slog.Uint64("shard", uint64(hello.Shard)))
	(*log).Debug("Sidecar connection opened", slog.Uint64("shard_count", uint64(hello.ShardCount)))

	idle := orDefault(s.IdleTimeout, DefaultIdleTimeout)
	writeTimeout := orDefault(s.AckWriteTimeout, DefaultAckWriteTimeout)
	frameTimeout := orDefault(s.FrameTimeout, DefaultFrameTimeout)
	s.mu.Lock()
	st := s.conns[conn]
	s.mu.Unlock()
	if st == nil {
		return errEvicted
	}
	r := &frameReader{s: s, conn: conn, st: st, max: s.maxFrameBytes() - sdp.HeaderSize}
	defer r.close()
	out := bufio.NewWriterSize(conn, 4<<10)
	syncer, _ := s.Handler.(Syncer)
	var (
		pending []pendingAck
		ackBuf  []byte
	)
	// flush sends the pending Acks, after Sync when they accept frames.
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		if syncer != nil {
			accepted := false
			for _, a := range pending {
				accepted = accepted || a.status == sdp.AckAccepted
			}
			if accepted {
				if err := syncer.Sync(&hello); err != nil {
					detail := "syncing accepted frames to stable storage failed: " + err.Error()
					(*log).Warn("Sync failed; the frames are answered with retry", slog.Any("error", err))
					for i := range pending {
						if pending[i].status == sdp.AckAccepted {
							pending[i].status, pending[i].detail = sdp.AckRetry, detail
						}
					}
				}
			}
		}
		for i, a := range pending {
			if coalesces(a, pending[i+1:]) {
				continue
			}
			ack := sdp.Ack{Sequence: a.seq, Status: a.status, Detail: truncate(a.detail, sdp.MaxAckDetailSize)}
			var err error
			if ackBuf, err = ack.AppendFrame(ackBuf[:0]); err != nil {
				return fmt.Errorf("encoding Ack for frame %d: %w", a.seq, err)
			}
			if _, err := out.Write(ackBuf); err != nil {
				return fmt.Errorf("writing Ack for frame %d: %w", a.seq, err)
			}
		}
		last := pending[len(pending)-1].seq
		clear(pending)
		pending = pending[:0]
		if err := conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
			return err
		}
		if err := out.Flush(); err != nil {
			return fmt.Errorf("writing Acks up to frame %d: %w", last, err)
		}
		return nil
	}
	// Acks of frames handled before a bad one still go out, so that the
	// client does not send those frames again.
	defer func() {
		if err := flush(); err != nil {
			(*log).Debug("Could not send the last Acks", slog.Any("error", err))
		}
	}()

	var (
		f     sdp.ResourceFrame
		delay *time.Timer
	)
	if s.AckDelay > 0 {
		delay = time.NewTimer(time.Hour)
		delay.Stop()
		defer delay.Stop()
	}
	for want := uint64(1); ; want++ {
		h, payload, err := r.next(idle, frameTimeout)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("frame %d: %w", want, err)
		}
		if h.Type != sdp.TypeResourceFrame {
			return protocolError("frame %d is a %s, want ResourceFrame", want, sdp.TypeName(h.Type))
		}
		if err := f.DecodePayload(payload); err != nil {
			return protocolError("decoding frame %d: %w", want, err)
		}
		if f.Sequence != want {
			return protocolError("frame has sequence %d, want %d", f.Sequence, want)
		}
		if f.Signal < 1 || f.Signal > 4 {
			return protocolError("frame %d has signal %d; the schema defines 1 traces, 2 metrics, 3 logs and 4 profiles", want, f.Signal)
		}
		if f.Shard != hello.Shard {
			return protocolError("frame %d has shard %d, but the connection's Hello is for shard %d of %d", want, f.Shard, hello.Shard, hello.ShardCount)
		}
		// The reader marked the connection busy until its next read, so
		// that it does not qualify for eviction while frames are handled.
		status, detail := s.Handler.HandleFrame(&hello, &f)
		f.OTLP = nil
		r.done()
		if delay != nil {
			delay.Reset(s.AckDelay)
			select {
			case <-delay.C:
			case <-s.quit:
				return errors.New("server shutting down")
			}
		}
		pending = append(pending, pendingAck{seq: want, status: status, detail: detail})
		// Acks of frames that already sit in the read buffer go out
		// together: one write per read.
		if !r.frameBuffered() || len(pending) >= maxPendingAcks {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// coalesces reports whether a's Ack can be left out because the next
// pending Ack, which settles a's frame too (an Ack settles every frame up to
// its sequence), carries the same answer: both accept without detail. A
// frame answered otherwise keeps an Ack of its own, and so does the last
// accepted frame before it, so that the client learns exactly which frames
// were not accepted.
func coalesces(a pendingAck, next []pendingAck) bool {
	return len(next) > 0 && a.status == sdp.AckAccepted && a.detail == "" &&
		next[0].status == sdp.AckAccepted && next[0].detail == ""
}
