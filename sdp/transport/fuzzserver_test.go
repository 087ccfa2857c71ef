// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// streamConn is a net.Conn that reads a fixed stream and records what is
// written, so that a fuzz input runs through a Server connection
// synchronously.
type streamConn struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (c *streamConn) Read(p []byte) (int, error)       { return c.in.Read(p) }
func (c *streamConn) Write(p []byte) (int, error)      { return c.out.Write(p) }
func (c *streamConn) Close() error                     { return nil }
func (c *streamConn) LocalAddr() net.Addr              { return &net.UnixAddr{Name: "local", Net: "unix"} }
func (c *streamConn) RemoteAddr() net.Addr             { return &net.UnixAddr{Name: "remote", Net: "unix"} }
func (c *streamConn) SetDeadline(time.Time) error      { return nil }
func (c *streamConn) SetReadDeadline(time.Time) error  { return nil }
func (c *streamConn) SetWriteDeadline(time.Time) error { return nil }
func fuzzFrame(seq uint64, signal uint8, shard uint32) []byte {
	f := sdp.ResourceFrame{Sequence: seq, Signal: signal, Shard: shard, ItemCount: 1, OTLP: []byte("otlp")}
	b, _ := f.AppendFrame(nil)
	return b
}

// seedTwoFrames is FuzzServerStream's seed of a Hello and two valid frames.
var seedTwoFrames []byte

// FuzzServerStream runs arbitrary bytes through a Server connection and
// checks that whatever reaches the Handler is what the protocol admits:
// frames numbered 1, 2, ... of the Hello's shard and a defined signal, each
// answered by exactly one Ack in order, all from buffers bounded by the
// limits.
func FuzzServerStream(f *testing.F) {
	hello, _ := (&sdp.Hello{ProtocolVersion: 1, Sender: "fuzz", Shard: 2, ShardCount: 3}).AppendFrame(nil)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	f.Add(hello)
	seedTwoFrames = cat(hello, fuzzFrame(1, 1, 2), fuzzFrame(2, 3, 2))
	f.Add(seedTwoFrames)
	f.Add(cat(hello, fuzzFrame(1, 1, 2), fuzzFrame(2, 1, 1)))
	f.Add(cat(hello, fuzzFrame(1, 9, 2)))
	f.Add(cat(hello, fuzzFrame(2, 1, 2)))
	f.Add(cat(hello, hello))
	f.Add(frameHeader(sdp.TypeHello, 2<<20))
	f.Add(frameHeader(sdp.TypeResourceFrame, 2<<20))
	f.Add(cat(hello, frameHeader(sdp.TypeResourceFrame, 2<<20), []byte("short")))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Add([]byte{0x16, 0x03, 0x01, 0x00, 0x05})
	f.Fuzz(func(t *testing.T, stream []byte) {
		var handled []sdp.ResourceFrame
		var hello *sdp.Hello
		srv := &Server{Handler: HandlerFunc(func(h *sdp.Hello, fr *sdp.ResourceFrame) (sdp.AckStatus, string) {
			hello = h
			handled = append(handled, sdp.ResourceFrame{Sequence: fr.Sequence, Signal: fr.Signal, Shard: fr.Shard})
			return sdp.AckStatus(len(handled) % 3), "detail"
		})}
		conn := &streamConn{in: bytes.NewReader(stream)}
		// Registered as Serve registers an accepted connection: without
		// it the connection would count as evicted at its Hello and no
		// frame would be read.
		srv.mu.Lock()
		srv.initLocked()
		srv.conns[conn] = &connState{}
		srv.mu.Unlock()
		log := slog.New(slog.DiscardHandler)
		srv.serveFrames(conn, &log)
		if bytes.Equal(stream, seedTwoFrames) && len(handled) != 2 {
			t.Fatalf("the seed of two valid frames got %d frames handled, want 2", len(handled))
		}
		for i, fr := range handled {
			if fr.Sequence != uint64(i+1) || fr.Shard != hello.Shard || fr.Signal < 1 || fr.Signal > 4 || hello.Shard >= hello.ShardCount {
				t.Fatalf("handled frame %d: %+v under %+v", i, fr, hello)
			}
		}
		r := sdp.NewReader(&conn.out, sdp.MaxAckFrameSize)
		for i := range handled {
			_, payload, err := r.Next()
			if err != nil {
				t.Fatalf("Ack %d: %v", i, err)
			}
			var a sdp.Ack
			if err := a.DecodePayload(payload); err != nil || a.Sequence != uint64(i+1) || a.Status != sdp.AckStatus((i+1)%3) {
				t.Fatalf("Ack %d: %+v %v", i, a, err)
			}
		}
		if _, _, err := r.Next(); err != io.EOF {
			t.Fatalf("more than one Ack per handled frame: %v", err)
		}
	})
}
