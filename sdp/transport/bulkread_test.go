// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"bytes"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// scriptedConn is a connection whose reads return chunks of a byte stream
// cut where a test says, one chunk (or less) per Read, and which counts its
// reads and read-deadline changes.
type scriptedConn struct {
	net.Conn // unused methods panic
	chunks   [][]byte
	reads    int
	deadlies int
}

func (c *scriptedConn) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	c.reads++
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

func (c *scriptedConn) SetReadDeadline(time.Time) error { c.deadlies++; return nil }

// cut splits stream after each of the given lengths; the rest is the last
// chunk.
func cut(stream []byte, lengths ...int) [][]byte {
	var chunks [][]byte
	for _, n := range lengths {
		chunks = append(chunks, stream[:n])
		stream = stream[n:]
	}
	return append(chunks, stream)
}

// patterned encodes ResourceFrame seq with an OTLP payload of n bytes that
// depend on seq, so that a payload read from the wrong place shows.
func patterned(t *testing.T, seq uint64, n int) []byte {
	t.Helper()
	otlp := make([]byte, n)
	for i := range otlp {
		otlp[i] = byte(int(seq)*31 + i*7)
	}
	f := sdp.ResourceFrame{Sequence: seq, Signal: 1, Shard: 1, ItemCount: 1, OTLP: otlp}
	b, err := f.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newTestReader returns a frameReader of a Server set up as Serve does,
// reading from conn.
func newTestReader(t *testing.T, conn net.Conn) (*frameReader, *Server) {
	srv := &Server{Handler: newRecorder(nil)}
	srv.mu.Lock()
	srv.initLocked()
	srv.mu.Unlock()
	r := &frameReader{s: srv, conn: conn, st: &connState{}, max: srv.maxFrameBytes() - sdp.HeaderSize}
	t.Cleanup(r.close)
	return r, srv
}

// readAll reads frames from r until EOF and checks each against want;
// check runs on each frame before done gives it back.
func readAll(t *testing.T, r *frameReader, want [][]byte, check func(i int, payload []byte)) {
	t.Helper()
	for i := 0; ; i++ {
		h, payload, err := r.next(time.Minute, time.Minute)
		if err == io.EOF {
			if i != len(want) {
				t.Fatalf("EOF after %d frames, want %d", i, len(want))
			}
			return
		}
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if i >= len(want) {
			t.Fatalf("frame %d beyond the %d sent", i, len(want))
		}
		if h.Type != sdp.TypeResourceFrame || !bytes.Equal(payload, want[i][sdp.HeaderSize:]) {
			t.Fatalf("frame %d: got %d bytes of type %d, not the %d bytes sent", i, len(payload), h.Type, len(want[i])-sdp.HeaderSize)
		}
		if check != nil {
			check(i, payload)
		}
		r.done()
	}
}

func TestBulkReadsReassembleFramesThatStraddleReads(t *testing.T) {
	// Frames of many sizes, up to and past the read space, so that their
	// starts fall everywhere in it and some must move to its start.
	var frames [][]byte
	var stream []byte
	for i, n := range []int{1, 5000, 9000, 70000, 5000, 60000, 100, 40000, 300 << 10, 3, 120000, 7, 65000, 65000, 2000} {
		f := patterned(t, uint64(i+1), n)
		frames = append(frames, f)
		stream = append(stream, f...)
	}
	for _, tc := range []struct {
		name    string
		lengths []int
	}{
		{"in one piece", nil},
		{"cut inside a header", []int{3, 7, sdp.HeaderSize + 1 + 4}},
		{"cut in odd pieces", []int{4999, 1, 13, 65536, 70001, 9, 131072, 77777}},
		{"cut at read-space boundaries", []int{FreeFrameBytes - 1, 1, 1, FreeFrameBytes, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := &scriptedConn{chunks: cut(stream, tc.lengths...)}
			r, srv := newTestReader(t, conn)
			readAll(t, r, frames, nil)
			if got := srv.Stats().ReadBudgetBytes; got != 0 {
				t.Errorf("%d bytes of budget held after the frames", got)
			}
		})
	}
}

func TestAFrameAsLargeAsTheReadSpaceIsReadInPlace(t *testing.T) {
	exact := patterned(t, 1, FreeFrameBytes-sdp.ResourceHeaderSize)
	if len(exact) != FreeFrameBytes {
		t.Fatalf("frame of %d bytes, want %d", len(exact), FreeFrameBytes)
	}
	small := patterned(t, 2, 10)
	conn := &scriptedConn{chunks: cut(append(exact, small...), 1000)}
	r, _ := newTestReader(t, conn)
	readAll(t, r, [][]byte{exact, small}, func(i int, payload []byte) {
		space := r.buf.bytes(FreeFrameBytes)
		if i == 0 && &payload[0] != &space[sdp.HeaderSize] {
			t.Error("the frame that fills the read space was copied, not handed over in place")
		}
		if r.used != 0 {
			t.Errorf("frame %d took the large-frame path (%d bytes used)", i, r.used)
		}
	})
}

func TestAFrameLargerThanTheReadSpaceTakesBudgetedSteps(t *testing.T) {
	before := patterned(t, 1, 500)
	justOver := patterned(t, 2, FreeFrameBytes-sdp.ResourceHeaderSize+1) // payload FreeFrameBytes-9: free, but not in place
	large := patterned(t, 3, 300<<10)
	after := patterned(t, 4, 500)
	var stream []byte
	for _, f := range [][]byte{before, justOver, large, after} {
		stream = append(stream, f...)
	}
	conn := &scriptedConn{chunks: [][]byte{stream}}
	r, srv := newTestReader(t, conn)
	largePayload := len(large) - sdp.HeaderSize
	// Beyond its first FreeFrameBytes, the large frame takes budget for
	// every byte, a readStep at a time; the others take none.
	wantBudget := []int64{0, 0, int64(largePayload - FreeFrameBytes), 0}
	readAll(t, r, [][]byte{before, justOver, large, after}, func(i int, payload []byte) {
		if got := srv.Stats().ReadBudgetBytes; got != wantBudget[i] {
			t.Errorf("frame %d holds %d bytes of budget, want %d", i, got, wantBudget[i])
		}
	})
	if got := srv.Stats().ReadBudgetBytes; got != 0 {
		t.Errorf("%d bytes of budget held after the frames", got)
	}
}

func TestManyFramesInOneReadTakeOneReadAndOneDeadline(t *testing.T) {
	var frames [][]byte
	var stream []byte
	for i := range 200 {
		f := patterned(t, uint64(i+1), 300)
		frames = append(frames, f)
		stream = append(stream, f...)
	}
	conn := &scriptedConn{chunks: [][]byte{stream}}
	r, _ := newTestReader(t, conn)
	var busy int
	readAll(t, r, frames, func(i int, _ []byte) {
		if r.st.lastRead().Before(time.Now()) {
			busy++
		}
		if buffered := r.frameBuffered(); buffered != (i < len(frames)-1) {
			t.Errorf("frame %d: frameBuffered = %v", i, buffered)
		}
	})
	if busy != 0 {
		t.Errorf("%d frames were handled while their connection looked quiet", busy)
	}
	// One read brings the frames, the one after it finds the end.
	if conn.reads != 1 || conn.deadlies != 2 {
		t.Errorf("%d reads and %d read deadlines for %d frames in one piece, want 1 and 2", conn.reads, conn.deadlies, len(frames))
	}
}

// writeCountingListener counts the writes of the connections it accepts.
type writeCountingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *writeCountingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &writeCountingConn{Conn: c, writes: &l.writes}, nil
}

type writeCountingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *writeCountingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

func TestManySmallFramesInOneReadGetOneAckWrite(t *testing.T) {
	l, endpoint := listen(t, "unix")
	counting := &writeCountingListener{Listener: l}
	var mu sync.Mutex
	handled := 0
	srv := &Server{Handler: HandlerFunc(func(*sdp.Hello, *sdp.ResourceFrame) (sdp.AckStatus, string) {
		mu.Lock()
		handled++
		mu.Unlock()
		return sdp.AckAccepted, ""
	})}
	// The whole stream is in the socket before the Server accepts the
	// connection, so that its first read finds every frame.
	conn := dialRaw(t, endpoint)
	const n = 100
	stream := mustHello(t)
	for i := range n {
		stream = append(stream, patterned(t, uint64(i+1), 200)...)
	}
	if _, err := conn.Write(stream); err != nil {
		t.Fatal(err)
	}
	serve(t, srv, counting)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, payload, err := sdp.NewReader(conn, sdp.MaxAckFrameSize).Next()
	if err != nil {
		t.Fatal(err)
	}
	var ack sdp.Ack
	if err := ack.DecodePayload(payload); err != nil {
		t.Fatal(err)
	}
	if ack.Sequence != n || ack.Status != sdp.AckAccepted {
		t.Errorf("first Ack is %d %s, want %d accepted", ack.Sequence, ack.Status, n)
	}
	if got := counting.writes.Load(); got != 1 {
		t.Errorf("%d Ack writes for %d frames that arrived in one read, want 1", got, n)
	}
	mu.Lock()
	defer mu.Unlock()
	if handled != n {
		t.Errorf("%d frames handled, want %d", handled, n)
	}
}
