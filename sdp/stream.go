// SPDX-License-Identifier: Apache-2.0

package sdp

import (
	"errors"
	"fmt"
	"io"
	"net"
)

// DefaultMaxFrameSize is the maximum frame size of a Reader created with a
// non-positive maximum: room for the largest ResourceFrame with margin for
// a long Hello sender or Ack detail.
const DefaultMaxFrameSize = 2 << 20

// Reader reads frames one after another from a stream. It reuses one
// buffer, grown only after a frame's declared length has passed the maximum
// frame size. A Reader is not safe for concurrent use.
type Reader struct {
	r      io.Reader
	max    int // maximum frame size, header included
	header [HeaderSize]byte
	buf    []byte
	err    error // sticky: after a failure the stream is out of step
}

// NewReader returns a Reader of r that refuses frames over maxFrameSize
// bytes, header included. A non-positive maxFrameSize means
// DefaultMaxFrameSize; one beyond HeaderSize+MaxValueSize is lowered to it,
// and one below HeaderSize is raised to it (only empty payloads pass), so
// that the limit never underflows into no limit at all.
func NewReader(r io.Reader, maxFrameSize int) *Reader {
	if maxFrameSize <= 0 {
		maxFrameSize = DefaultMaxFrameSize
	}
	maxFrameSize = min(max(maxFrameSize, HeaderSize), HeaderSize+MaxValueSize)
	return &Reader{r: r, max: maxFrameSize}
}

// Next reads the next frame and returns its header and payload. The payload
// is valid until the next call. Next reads nothing of the stream beyond the
// frame it returns. At a clean end of stream, between frames,
// Next returns io.EOF; a stream that ends inside a frame gives an error
// matching both ErrUnexpectedEnd and io.ErrUnexpectedEOF. A frame over the
// maximum size gives a *FrameSizeError (matching ErrTooLarge) before its
// payload is read. The buffer grows with the payload bytes that arrive, not
// with the declared length. Any error is final: later calls return it
// again.
func (r *Reader) Next() (Header, []byte, error) {
	if r.err != nil {
		return Header{}, nil, r.err
	}
	h, payload, err := r.next()
	if err != nil {
		r.err = err
		return Header{}, nil, err
	}
	return h, payload, nil
}

func (r *Reader) next() (Header, []byte, error) {
	if _, err := io.ReadFull(r.r, r.header[:]); err != nil {
		if err == io.EOF {
			return Header{}, nil, io.EOF
		}
		return Header{}, nil, readError(err, "frame header")
	}
	h, err := ParseHeader(r.header[:])
	if err != nil {
		return Header{}, nil, err
	}
	if uint64(h.Length) > uint64(r.max-HeaderSize) {
		return Header{}, nil, &FrameSizeError{Header: h, Limit: r.max}
	}
	n := int(h.Length)
	if cap(r.buf) >= n {
		payload := r.buf[:n:n]
		if _, err := io.ReadFull(r.r, payload); err != nil {
			return Header{}, nil, readError(err, "frame payload")
		}
		return h, payload, nil
	}
	// The buffer grows with the bytes that actually arrive, not with the
	// declared length: a peer that declares a large frame and sends little
	// makes the Reader hold little. Growth is geometric, so rising sizes
	// do not reallocate every frame, and never passes what a valid frame
	// may need.
	limit := r.max - HeaderSize
	got := 0
	for got < n {
		if got == cap(r.buf) {
			grown := make([]byte, min(max(2*cap(r.buf), growChunk), limit))
			copy(grown, r.buf[:got])
			r.buf = grown
		}
		m, err := io.ReadFull(r.r, r.buf[got:min(cap(r.buf), n)])
		got += m
		if err != nil {
			return Header{}, nil, readError(err, "frame payload")
		}
	}
	return h, r.buf[:n:n], nil
}

// growChunk is the least a Reader's buffer grows by while a payload
// arrives.
const growChunk = 64 << 10

// readError maps a short read inside a frame to ErrUnexpectedEnd.
func readError(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: stream ended inside the %s: %w", ErrUnexpectedEnd, what, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("sdp: reading %s: %w", what, err)
}

// Writer writes whole frames to a stream. It does not buffer: wrap the
// stream in a bufio.Writer to coalesce small frames. A Writer is not safe
// for concurrent use.
type Writer struct {
	w      io.Writer
	header [ResourceHeaderSize]byte
	bufs   [2][]byte
	vec    net.Buffers // over bufs; a field so the vectored write does not allocate
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// WriteFrame writes frame, which must be exactly one complete encoded
// frame: anything else would put the stream out of step with its reader.
func (w *Writer) WriteFrame(frame []byte) error {
	h, err := ParseHeader(frame)
	if err != nil {
		return err
	}
	if uint64(len(frame)) != HeaderSize+uint64(h.Length) {
		return fmt.Errorf("%w: buffer of %d bytes holds a frame of %d", ErrInvalidData, len(frame), HeaderSize+uint64(h.Length))
	}
	if _, err := w.w.Write(frame); err != nil {
		return fmt.Errorf("sdp: writing frame: %w", err)
	}
	return nil
}

// WriteResourceFrame encodes and writes f without copying f.OTLP: a net.Conn
// receives the header and the payload in one vectored write.
func (w *Writer) WriteResourceFrame(f *ResourceFrame) error {
	header, err := f.AppendHeader(w.header[:0])
	if err != nil {
		return err
	}
	w.bufs = [2][]byte{header, f.OTLP}
	w.vec = w.bufs[:]
	_, err = w.vec.WriteTo(w.w)
	w.bufs, w.vec = [2][]byte{}, nil // do not keep the caller's payload reachable
	if err != nil {
		return fmt.Errorf("sdp: writing frame: %w", err)
	}
	return nil
}
