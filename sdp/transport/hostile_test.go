// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// healthy is a well-behaved client that a test keeps sending through while
// hostile connections come and go.
type healthy struct {
	t    *testing.T
	c    *Client
	rec  *recorder
	sent []string
	errs []error
	mu   sync.Mutex
	wg   sync.WaitGroup
}

func newHealthy(t *testing.T, endpoint string, rec *recorder) *healthy {
	return &healthy{t: t, c: startClient(t, testSettings(t, endpoint, nil)), rec: rec}
}

func (h *healthy) send(name string) {
	h.t.Helper()
	h.wg.Add(1)
	h.sent = append(h.sent, name)
	sendRetrying(h.t, h.c, []Frame{testFrame(h.t, name, 100)}, func(err error) {
		h.mu.Lock()
		h.errs = append(h.errs, err)
		h.mu.Unlock()
		h.wg.Done()
	})
}

// check waits for every frame sent to settle and to have reached the
// handler, then shuts the client down.
func (h *healthy) check() {
	h.t.Helper()
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		h.t.Fatal("the healthy client's frames did not settle")
	}
	for _, err := range h.errs {
		if err != nil {
			h.t.Errorf("a healthy frame settled with %v", err)
		}
	}
	for _, name := range h.sent {
		if h.rec.count(name) < 1 {
			h.t.Errorf("healthy frame %s never reached the handler", name)
		}
	}
	if err := shutdownClient(h.t, h.c, 5*time.Second); err != nil {
		h.t.Error(err)
	}
}

// dialRaw connects to endpoint without writing anything.
func dialRaw(t *testing.T, endpoint string) net.Conn {
	t.Helper()
	network, address, err := ParseEndpoint(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// expectEOF waits up to d for the server to close conn, without any frame.
func expectEOF(t *testing.T, conn net.Conn, d time.Duration) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(d))
	var b [64]byte
	n, err := conn.Read(b[:])
	if n > 0 {
		t.Fatalf("server sent %q", b[:n])
	}
	if err == nil || isTimeout(err) {
		t.Fatalf("server did not close the connection within %v: %v", d, err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// heapInUse is the memory the test process holds in heap objects and
// goroutine stacks, after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// frameHeader encodes a frame header declaring a payload of length bytes.
func frameHeader(typ uint16, length uint32) []byte {
	h := []byte{'S', 'D', 'P', '2', 0, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint16(h[4:], typ)
	binary.LittleEndian.PutUint32(h[6:], length)
	return h
}

func TestIdleConnectionsKeepMemoryBoundedAndHitTheHelloTimeout(t *testing.T) {
	rec := newRecorder(nil)
	l, endpoint := listen(t, "unix")
	srv := &Server{Handler: rec, HelloTimeout: time.Second}
	serve(t, srv, l)
	h := newHealthy(t, endpoint, rec)
	h.send("before")

	const n = 200
	before := heapInUse()
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = dialRaw(t, endpoint)
		// Half send part of a Hello header, half nothing at all.
		if i%2 == 0 {
			conns[i].Write([]byte("SDP2"))
		}
	}
	eventually(t, 5*time.Second, "the server to accept every connection", func() bool { return srv.Stats().Accepted >= n+1 })
	h.send("during")
	grown := int64(heapInUse()) - int64(before)
	t.Logf("%d idle connections: heap and stacks grew by %.1f MB", n, float64(grown)/(1<<20))
	if grown > 20<<20 {
		t.Errorf("%d idle connections grew heap and stacks by %d bytes, want under 20 MB", n, grown)
	}
	for _, c := range conns {
		expectEOF(t, c, 5*time.Second)
	}
	eventually(t, 5*time.Second, "the Hello timeouts to be counted", func() bool { return srv.Stats().HelloTimeouts == n })
	h.send("after")
	h.check()
	if st := srv.Stats(); st.ProtocolErrors != 0 || st.Refused != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestStalledLargeFramesKeepMemoryBoundedAndHitTheFrameTimeout(t *testing.T) {
	rec := newRecorder(nil)
	l, endpoint := listen(t, "unix")
	srv := &Server{Handler: rec, IdleTimeout: time.Hour, FrameTimeout: time.Second}
	serve(t, srv, l)
	h := newHealthy(t, endpoint, rec)
	h.send("before")

	// Each connection says Hello, declares a frame of 2 MiB and sends 1 KiB
	// of it: a server that allocated by the declared length would hold
	// 400 MB.
	const n = 200
	before := heapInUse()
	conns := make([]net.Conn, n)
	stalled := append(frameHeader(sdp.TypeResourceFrame, 2<<20-sdp.HeaderSize), make([]byte, 1024)...)
	for i := range conns {
		conns[i] = dialRaw(t, endpoint)
		if _, err := conns[i].Write(append(mustHello(t), stalled...)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 5*time.Second, "the server to accept every connection", func() bool { return srv.Stats().Accepted >= n+1 })
	time.Sleep(100 * time.Millisecond) // let the server read what was sent
	h.send("during")
	grown := int64(heapInUse()) - int64(before)
	t.Logf("%d stalled connections: heap and stacks grew by %.1f MB", n, float64(grown)/(1<<20))
	if grown > 60<<20 {
		t.Errorf("%d stalled connections grew heap and stacks by %d bytes, want under 60 MB", n, grown)
	}
	for _, c := range conns {
		expectEOF(t, c, 5*time.Second)
	}
	eventually(t, 5*time.Second, "the frame timeouts to be counted", func() bool { return srv.Stats().FrameTimeouts >= n })
	h.send("after")
	h.check()
	if st := srv.Stats(); st.IdleTimeouts != 0 || st.ReadBudgetBytes != 0 {
		t.Errorf("stats %+v, want no idle timeout and no budget held", st)
	}
}

func TestOversizedOrMisplacedFirstFrameIsRefusedBeforeAllocating(t *testing.T) {
	rec := newRecorder(nil)
	l, endpoint := listen(t, "tcp")
	srv := &Server{Handler: rec}
	serve(t, srv, l)
	h := newHealthy(t, endpoint, rec)
	h.send("before")

	firsts := map[string][]byte{
		"Hello declaring 2 MiB":         frameHeader(sdp.TypeHello, 2<<20),
		"Hello one byte over the limit": frameHeader(sdp.TypeHello, sdp.MaxHelloFrameSize-sdp.HeaderSize+1),
		"ResourceFrame first":           frameHeader(sdp.TypeResourceFrame, 2<<20-sdp.HeaderSize),
		"Ack first":                     frameHeader(sdp.TypeAck, 20),
		"unknown type":                  frameHeader(9, 20),
		"garbage":                       []byte("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 garbage"),
		"HTTP":                          []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	allocated := m.TotalAlloc
	const rounds = 10
	for range rounds {
		for name, b := range firsts {
			conn := dialRaw(t, endpoint)
			if _, err := conn.Write(b); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			expectEOF(t, conn, 5*time.Second)
			conn.Close()
		}
	}
	eventually(t, 5*time.Second, "the protocol errors to be counted", func() bool {
		return srv.Stats().ProtocolErrors == uint64(rounds*len(firsts))
	})
	runtime.ReadMemStats(&m)
	perConn := (m.TotalAlloc - allocated) / uint64(rounds*len(firsts))
	t.Logf("allocated %d bytes per refused connection (both ends)", perConn)
	if perConn > 64<<10 {
		t.Errorf("each refused connection allocated %d bytes, want well under the 2 MiB declared", perConn)
	}
	h.send("after")
	h.check()
}

func TestFramesOfTheWrongShardOrSignalCloseTheConnection(t *testing.T) {
	rec := newRecorder(nil)
	l, endpoint := listen(t, "unix")
	srv := &Server{Handler: rec}
	serve(t, srv, l)
	h := newHealthy(t, endpoint, rec)
	h.send("before")

	frame := func(seq uint64, signal uint8, shard uint32) []byte {
		f := sdp.ResourceFrame{Sequence: seq, Signal: signal, Shard: shard, ItemCount: 1, OTLP: []byte("bad")}
		b, err := f.AppendFrame(nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	good := func(seq uint64) []byte { return frame(seq, 1, goodHello.Shard) }
	cases := []struct {
		name   string
		stream []byte
		// wantSettled is the last sequence the server acknowledges.
		wantSettled uint64
	}{
		{"shard other than the Hello's", append(good(1), frame(2, 1, 2)...), 1},
		{"shard at the shard count", frame(1, 1, goodHello.ShardCount), 0},
		{"signal 0", frame(1, 0, goodHello.Shard), 0},
		{"signal 5", append(good(1), frame(2, 5, goodHello.Shard)...), 1},
		{"profiles is defined", append(good(1), frame(2, 4, goodHello.Shard)...), 2},
	}
	wantErrors := 0
	for _, tc := range cases {
		conn := rawConn(t, endpoint, &goodHello)
		if _, err := conn.Write(tc.stream); err != nil {
			t.Fatal(err)
		}
		if tc.wantSettled == 2 {
			conn.(interface{ CloseWrite() error }).CloseWrite()
		} else {
			wantErrors++
		}
		settled := uint64(0)
		for _, a := range expectClosed(t, conn) {
			if a.Sequence <= settled || a.Status != sdp.AckAccepted {
				t.Errorf("%s: ack %+v after sequence %d", tc.name, a, settled)
			}
			settled = a.Sequence
		}
		if settled != tc.wantSettled {
			t.Errorf("%s: acks settle up to sequence %d, want %d", tc.name, settled, tc.wantSettled)
		}
	}
	eventually(t, 5*time.Second, "the protocol errors to be counted", func() bool { return srv.Stats().ProtocolErrors == uint64(wantErrors) })
	if n := rec.count("bad"); n != 4 {
		t.Errorf("handler saw %d frames, want the 4 valid ones", n)
	}
	h.send("after")
	h.check()
}

func TestAtTheLimitAHelloTakesThePlaceOfAQuietConnectionOrIsRefused(t *testing.T) {
	rec := newRecorder(nil)
	l, endpoint := listen(t, "tcp")
	logger, logs := observeLogs(slog.LevelDebug)
	srv := &Server{Handler: rec, MaxConns: 3, HelloTimeout: time.Minute, Logger: logger, quietGrace: 300 * time.Millisecond}
	serve(t, srv, l)
	h := newHealthy(t, endpoint, rec)
	h.send("before")
	quiet := []net.Conn{rawConn(t, endpoint, &goodHello)}
	time.Sleep(5 * time.Millisecond) // distinct arrival times
	quiet = append(quiet, rawConn(t, endpoint, &goodHello))
	eventually(t, 5*time.Second, "the limit to fill with connections past their Hello", func() bool {
		return logs.FilterMessage("Sidecar connection opened").Len() == 3
	})
	// Every connection received bytes within the grace: a newcomer's Hello
	// finds nobody to replace and it is refused, at once.
	for range 3 {
		expectEOF(t, rawConn(t, endpoint, &goodHello), 2*time.Second)
	}
	eventually(t, 5*time.Second, "the refusals to be counted", func() bool { return srv.Stats().Refused == 3 })
	// Once they are quiet, a Hello takes the place of the connection that
	// never completed a frame and has been quiet longest; the collector,
	// which has sent frames, is never the one to go while such remain.
	time.Sleep(400 * time.Millisecond)
	newcomer := rawConn(t, endpoint, &goodHello)
	expectEOF(t, quiet[0], 2*time.Second)
	time.Sleep(400 * time.Millisecond)
	rawConn(t, endpoint, &goodHello)
	expectEOF(t, quiet[1], 2*time.Second)
	time.Sleep(400 * time.Millisecond)
	rawConn(t, endpoint, &goodHello)
	expectEOF(t, newcomer, 2*time.Second)
	if st := srv.Stats(); st.Active != 3 || st.Evicted != 3 || st.Refused != 3 {
		t.Errorf("stats %+v, want 3 active, 3 evicted, 3 refused", st)
	}
	h.send("during")
	h.check()
	warned := logs.FilterMessageSnippet("connection limit").FilterLevelExact(slog.LevelWarn).Len()
	if warned != 1 {
		t.Errorf("%d warnings about the limit for 3 refusals, want 1 (rate-limited)", warned)
	}
}

func TestAtTheLimitANewConnectionTakesThePlaceOfASilentOne(t *testing.T) {
	rec := newRecorder(nil)
	l, endpoint := listen(t, "unix")
	const grace = 100 * time.Millisecond
	srv := &Server{Handler: rec, MaxConns: 3, HelloTimeout: time.Minute, quietGrace: grace}
	serve(t, srv, l)
	var silent []net.Conn
	for range 3 {
		silent = append(silent, dialRaw(t, endpoint))
		eventually(t, 5*time.Second, "the connection to be accepted", func() bool { return srv.Stats().Active == len(silent) })
		time.Sleep(2 * time.Millisecond) // distinct accept times
	}
	time.Sleep(grace) // they have waited long enough to be evicted
	// A collector arriving while silent connections fill the limit is
	// served at once: the oldest silent one makes room.
	h := newHealthy(t, endpoint, rec)
	h.send("despite the flood")
	expectEOF(t, silent[0], 2*time.Second)
	// Another newcomer evicts the next oldest silent connection, never the
	// collector's.
	dialRaw(t, endpoint)
	expectEOF(t, silent[1], 2*time.Second)
	h.send("still served")
	h.check()
	if st := srv.Stats(); st.Evicted != 2 || st.Refused != 0 || st.ProtocolErrors != 0 {
		t.Errorf("stats %+v, want 2 evicted", st)
	}
}

func TestAtTheLimitOnlyOneNewcomerWaitsForItsHello(t *testing.T) {
	l, endpoint := listen(t, "unix")
	const grace = 100 * time.Millisecond
	srv := &Server{Handler: newRecorder(nil), MaxConns: 2, HelloTimeout: time.Minute, quietGrace: grace}
	serve(t, srv, l)
	rawConn(t, endpoint, &goodHello)
	rawConn(t, endpoint, &goodHello)
	eventually(t, 5*time.Second, "two connections past their Hello", func() bool {
		st := srv.Stats()
		return st.Active == 2 && st.AwaitingHello == 0
	})
	// Silent newcomers replace each other on probation once the one there
	// has waited quietGrace; the connections past their Hello keep their
	// places.
	var silent []net.Conn
	for range 4 {
		silent = append(silent, dialRaw(t, endpoint))
		eventually(t, 5*time.Second, "the newcomer to be accepted", func() bool { return srv.Stats().Accepted == uint64(2+len(silent)) })
		time.Sleep(grace + 20*time.Millisecond)
	}
	for _, c := range silent[:3] {
		expectEOF(t, c, 2*time.Second)
	}
	if st := srv.Stats(); st.Active != 3 || st.AwaitingHello != 1 || st.Evicted != 3 {
		t.Errorf("stats %+v, want 3 active of which 1 awaiting its Hello, 3 evicted", st)
	}
	// A flood of connections cannot push out the one on probation before
	// it had the time to send its Hello: a newcomer that arrives within
	// quietGrace of it is refused instead.
	fresh := dialRaw(t, endpoint)
	eventually(t, 5*time.Second, "the fresh newcomer to be accepted", func() bool { return srv.Stats().Evicted == 4 })
	flood := dialRaw(t, endpoint)
	expectEOF(t, flood, 2*time.Second)
	if st := srv.Stats(); st.Evicted != 4 || st.Refused != 1 || st.AwaitingHello != 1 {
		t.Errorf("stats %+v, want the flood connection refused and the fresh one kept", st)
	}
	fresh.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := fresh.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection on probation was closed: %v", err)
	}
}

// A collector's connection, which has completed frames, keeps its place
// however long it has been quiet between batches: at the limit a
// newcomer's Hello is refused rather than take it.
func TestAtTheLimitAQuietCollectorKeepsItsPlace(t *testing.T) {
	rec := newRecorder(nil)
	l, endpoint := listen(t, "unix")
	const grace = 50 * time.Millisecond
	srv := &Server{Handler: rec, MaxConns: 1, HelloTimeout: time.Minute, quietGrace: grace}
	serve(t, srv, l)
	h := newHealthy(t, endpoint, rec)
	h.send("before")
	time.Sleep(4 * grace)
	expectEOF(t, rawConn(t, endpoint, &goodHello), 2*time.Second)
	h.send("after")
	h.check()
	if st := srv.Stats(); st.Evicted != 0 || st.Refused != 1 {
		t.Errorf("stats %+v, want the newcomer refused and nothing evicted", st)
	}
}

func TestIdleTimeoutClosesASilentConnection(t *testing.T) {
	l, endpoint := listen(t, "unix")
	srv := &Server{Handler: newRecorder(nil), IdleTimeout: 200 * time.Millisecond}
	serve(t, srv, l)
	conn := rawConn(t, endpoint, &goodHello)
	start := time.Now()
	expectClosed(t, conn)
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("closed after %v, before the idle timeout", d)
	}
	eventually(t, 5*time.Second, "the idle timeout to be counted", func() bool { return srv.Stats().IdleTimeouts == 1 })
}

func TestPeerStringsAreTruncatedInLogsAndDetails(t *testing.T) {
	logger, logs := observeLogs(slog.LevelDebug)
	long := strings.Repeat("é", 100_000) // 200,000 bytes
	rec := newRecorder(func(string) (sdp.AckStatus, string) { return sdp.AckRejected, long + "\xff" })
	l, endpoint := listen(t, "unix")
	serve(t, &Server{Handler: rec, Logger: logger}, l)

	hello := goodHello
	hello.Sender = strings.Repeat("s", sdp.MaxHelloSenderSize)
	conn := rawConn(t, endpoint, &hello)
	if _, err := conn.Write(append(bytes.Clone(seqFrame(t, 1)), append(frameHeader(sdp.TypeAck, 13), make([]byte, 13)...)...)); err != nil {
		t.Fatal(err)
	}
	// The client reads Acks under the contract's limit.
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, payload, err := sdp.NewReader(conn, sdp.MaxAckFrameSize).Next()
	if err != nil {
		t.Fatalf("reading the Ack under sdp.MaxAckFrameSize: %v", err)
	}
	var ack sdp.Ack
	if err := ack.DecodePayload(payload); err != nil {
		t.Fatal(err)
	}
	if ack.Status != sdp.AckRejected || !strings.HasPrefix(ack.Detail, "éé") || !strings.HasSuffix(ack.Detail, "[truncated, 200001 bytes]") {
		t.Errorf("Ack detail of %d bytes: %q...%q", len(ack.Detail), ack.Detail[:10], ack.Detail[len(ack.Detail)-30:])
	}
	expectClosed(t, conn)
	eventually(t, 5*time.Second, "the close to be logged", func() bool { return logs.FilterMessageSnippet("broke the protocol").Len() == 1 })
	for _, e := range logs.All() {
		for k, v := range e.ContextMap() {
			if s, ok := v.(string); ok && len(s) > MaxLoggedPeerString {
				t.Errorf("log %q field %s has %d bytes", e.Message, k, len(s))
			}
		}
		if e.Message == "Closing sidecar connection: the peer broke the protocol" {
			if s := e.ContextMap()["sender"].(string); !strings.HasSuffix(s, fmt.Sprintf("[truncated, %d bytes]", sdp.MaxHelloSenderSize)) {
				t.Errorf("sender logged as %q", s)
			}
		}
	}
}

// seqFrame is testFrame numbered seq.
func seqFrame(t *testing.T, seq uint64) []byte {
	b := testFrame(t, "x", 10).Bytes
	if err := sdp.SetSequence(b, seq); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{"bad\xffutf8", 20, "bad\uFFFDutf8"},
		{strings.Repeat("a", 40), 30, "aaaaaa…[truncated, 40 bytes]"},
		{strings.Repeat("é", 20), 30, "ééé…[truncated, 40 bytes]"},
		{strings.Repeat("é", 20), 29, "éé…[truncated, 40 bytes]"},
		// Each lone invalid byte becomes a three-byte U+FFFD, so the part
		// kept grows from 6 bytes to 12 and must be cut again, whole runes
		// at a time, to stay within the limit.
		{strings.Repeat("\xffa", 20), 30, "\uFFFDa…[truncated, 40 bytes]"},
	} {
		got := truncate(tc.in, tc.limit)
		if got != tc.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
		if len(got) > tc.limit {
			t.Errorf("truncate(%q, %d) has %d bytes", tc.in, tc.limit, len(got))
		}
	}
}

// syncRecorder is a recorder that counts Syncs and fails them on demand.
type syncRecorder struct {
	*recorder
	mu       sync.Mutex
	syncs    int
	fail     bool
	unsynced int // frames handled since the last Sync
}

func (r *syncRecorder) HandleFrame(hello *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string) {
	r.mu.Lock()
	r.unsynced++
	r.mu.Unlock()
	return r.recorder.HandleFrame(hello, f)
}

func (r *syncRecorder) Sync(*sdp.Hello) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncs++
	r.unsynced = 0
	if r.fail {
		return fmt.Errorf("disk on fire")
	}
	return nil
}

func TestSyncerRunsBeforeAcksAndItsFailureMeansRetry(t *testing.T) {
	sr := &syncRecorder{recorder: newRecorder(nil)}
	l, endpoint := listen(t, "unix")
	serve(t, &Server{Handler: sr}, l)
	conn := rawConn(t, endpoint, &goodHello)
	const n = 50
	var stream []byte
	for i := range n {
		stream = append(stream, seqFrame(t, uint64(i+1))...)
	}
	if _, err := conn.Write(stream); err != nil {
		t.Fatal(err)
	}
	r := sdp.NewReader(conn, sdp.MaxAckFrameSize)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	acks := 0
	for settled := uint64(0); settled < n; {
		_, payload, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		var ack sdp.Ack
		if err := ack.DecodePayload(payload); err != nil || ack.Sequence <= settled || ack.Sequence > n || ack.Status != sdp.AckAccepted {
			t.Fatalf("ack %d after sequence %d: %+v %v", acks, settled, ack, err)
		}
		acks++
		settled = ack.Sequence
		// Every frame an Ack accepts was handled before a Sync.
		sr.mu.Lock()
		if sr.syncs == 0 || sr.recorder.count("x") < int(settled) {
			t.Errorf("ack of sequence %d went out with %d syncs", settled, sr.syncs)
		}
		sr.mu.Unlock()
	}
	sr.mu.Lock()
	syncs := sr.syncs
	sr.fail = true
	sr.mu.Unlock()
	t.Logf("%d frames written at once: %d syncs, %d acks", n, syncs, acks)
	if syncs > acks {
		t.Errorf("%d syncs for %d frames", syncs, n)
	}

	if _, err := conn.Write(seqFrame(t, n+1)); err != nil {
		t.Fatal(err)
	}
	_, payload, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	var ack sdp.Ack
	if err := ack.DecodePayload(payload); err != nil {
		t.Fatal(err)
	}
	if ack.Status != sdp.AckRetry || !strings.Contains(ack.Detail, "disk on fire") {
		t.Errorf("ack after a failed Sync: %+v", ack)
	}
}
