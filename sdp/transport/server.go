package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// DefaultAckWriteTimeout bounds the write of an Ack when
// Server.AckWriteTimeout is zero.
const DefaultAckWriteTimeout = 10 * time.Second

// Handler takes the frames that a Server receives.
type Handler interface {
	// HandleFrame takes one frame of the connection that hello opened and
	// returns the Ack status and, when it is not AckAccepted, a detail
	// saying why. It is called sequentially per connection (concurrently
	// across connections); f.OTLP is valid only during the call.
	HandleFrame(hello *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(hello *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string)

// HandleFrame calls fn(hello, f).
func (fn HandlerFunc) HandleFrame(hello *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string) {
	return fn(hello, f)
}

// Server is the sidecar's end of the transport. Each connection must open
// with a Hello of protocol version 1 and then carry ResourceFrames numbered
// 1, 2, 3, ...; the server answers each with an Ack. A connection that
// breaks the protocol or sends a malformed frame is closed with a logged
// reason; the others carry on. Set the fields before Serve and do not copy
// a Server after first use.
type Server struct {
	// Handler takes the frames.
	Handler Handler
	// Logger receives connection events and protocol errors; nil logs
	// nothing.
	Logger *zap.Logger
	// MaxFrameBytes bounds a frame, header included; zero means
	// sdp.DefaultMaxFrameSize, enough for the largest ResourceFrame.
	MaxFrameBytes int
	// AckDelay delays every Ack, to demonstrate or test a slow sidecar.
	AckDelay time.Duration
	// AckWriteTimeout bounds each Ack write; zero means
	// DefaultAckWriteTimeout.
	AckWriteTimeout time.Duration

	mu        sync.Mutex
	closed    bool
	quit      chan struct{}
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	wg        sync.WaitGroup
}

func (s *Server) initLocked() {
	if s.quit == nil {
		s.quit = make(chan struct{})
		s.listeners = make(map[net.Listener]struct{})
		s.conns = make(map[net.Conn]struct{})
	}
}

func (s *Server) logger() *zap.Logger {
	if s.Logger == nil {
		return zap.NewNop()
	}
	return s.Logger
}

// Serve accepts connections on l and serves each on its own goroutine until
// Shutdown, when it returns ErrServerClosed. It closes l when it returns.
// One Server may serve several listeners.
func (s *Server) Serve(l net.Listener) error {
	if s.Handler == nil {
		l.Close()
		return errors.New("transport: Server has no Handler")
	}
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
			s.logger().Warn("Accepting a sidecar connection failed; retrying", zap.Error(err), zap.Duration("pause", pause))
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-s.quit:
				t.Stop()
			}
			continue
		}
		pause = 0
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			conn.Close()
			return ErrServerClosed
		}
		s.conns[conn] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(conn)
	}
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

func (s *Server) serveConn(conn net.Conn) {
	defer s.wg.Done()
	defer func() {
		conn.Close()
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
	}()
	log := s.logger().With(zap.String("local", conn.LocalAddr().String()), zap.String("remote", conn.RemoteAddr().String()))
	if err := s.serveFrames(conn, &log); err != nil {
		if s.isClosed() {
			log.Debug("Sidecar connection closed by shutdown", zap.Error(err))
		} else {
			log.Warn("Closing sidecar connection", zap.Error(err))
		}
		return
	}
	log.Debug("Sidecar connection ended by the client")
}

// serveFrames runs the protocol on conn; nil means the client closed the
// connection between frames.
func (s *Server) serveFrames(conn net.Conn, log **zap.Logger) error {
	in := bufio.NewReaderSize(conn, 64<<10)
	r := sdp.NewReader(in, s.MaxFrameBytes)
	h, payload, err := r.Next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("reading Hello: %w", err)
	}
	if h.Type != sdp.TypeHello {
		return fmt.Errorf("first frame has type %d, want Hello (%d)", h.Type, sdp.TypeHello)
	}
	var hello sdp.Hello
	if err := hello.DecodePayload(payload); err != nil {
		return fmt.Errorf("decoding Hello: %w", err)
	}
	if hello.ProtocolVersion != sdp.ProtocolVersion {
		return fmt.Errorf("the Hello has protocol version %d, want %d", hello.ProtocolVersion, sdp.ProtocolVersion)
	}
	if hello.ShardCount == 0 || hello.Shard >= hello.ShardCount {
		return fmt.Errorf("the Hello has shard %d of %d", hello.Shard, hello.ShardCount)
	}
	*log = (*log).With(zap.String("sender", hello.Sender), zap.Uint32("shard", hello.Shard))
	(*log).Debug("Sidecar connection opened", zap.Uint32("shard_count", hello.ShardCount))

	out := bufio.NewWriterSize(conn, 4<<10)
	writeTimeout := s.AckWriteTimeout
	if writeTimeout <= 0 {
		writeTimeout = DefaultAckWriteTimeout
	}
	// Acks of frames handled before a bad one still go out, so that the
	// client does not send those frames again.
	defer func() {
		if out.Buffered() > 0 {
			conn.SetWriteDeadline(time.Now().Add(writeTimeout))
			out.Flush()
		}
	}()
	var (
		f      sdp.ResourceFrame
		ack    sdp.Ack
		ackBuf []byte
		delay  *time.Timer
	)
	if s.AckDelay > 0 {
		delay = time.NewTimer(time.Hour)
		delay.Stop()
		defer delay.Stop()
	}
	for want := uint64(1); ; want++ {
		h, payload, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading frame %d: %w", want, err)
		}
		if h.Type != sdp.TypeResourceFrame {
			return fmt.Errorf("frame %d has type %d, want ResourceFrame (%d)", want, h.Type, sdp.TypeResourceFrame)
		}
		if err := f.DecodePayload(payload); err != nil {
			return fmt.Errorf("decoding frame %d: %w", want, err)
		}
		if f.Sequence != want {
			return fmt.Errorf("frame has sequence %d, want %d", f.Sequence, want)
		}
		status, detail := s.Handler.HandleFrame(&hello, &f)
		f.OTLP = nil
		if delay != nil {
			delay.Reset(s.AckDelay)
			select {
			case <-delay.C:
			case <-s.quit:
				return errors.New("server shutting down")
			}
		}
		ack = sdp.Ack{Sequence: want, Status: status, Detail: detail}
		if ackBuf, err = ack.AppendFrame(ackBuf[:0]); err != nil {
			return fmt.Errorf("encoding Ack for frame %d: %w", want, err)
		}
		if _, err := out.Write(ackBuf); err != nil {
			return fmt.Errorf("writing Ack for frame %d: %w", want, err)
		}
		// Acks of frames that already sit in the read buffer go out together.
		if !frameBuffered(in) || out.Available() < 512 {
			if err := conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
				return err
			}
			if err := out.Flush(); err != nil {
				return fmt.Errorf("writing Ack for frame %d: %w", want, err)
			}
		}
	}
}

// frameBuffered reports whether a whole frame waits in in, so that reading
// it cannot block.
func frameBuffered(in *bufio.Reader) bool {
	if in.Buffered() < sdp.HeaderSize {
		return false
	}
	b, err := in.Peek(sdp.HeaderSize)
	if err != nil {
		return false
	}
	h, err := sdp.ParseHeader(b)
	return err != nil || uint64(in.Buffered()) >= sdp.HeaderSize+uint64(h.Length)
}
