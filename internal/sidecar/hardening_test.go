// SPDX-License-Identifier: Apache-2.0

package sidecar

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

func TestFileModeWritesOnlyValidOTLPOfTheFramesSignal(t *testing.T) {
	dir := t.TempDir()
	s, err := newFileSink(dir, fileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	good := tracesPayload(t, 0, "a", 3)
	for _, tc := range []struct {
		name   string
		frame  *sdp.ResourceFrame
		detail string
	}{
		{"not protobuf", &sdp.ResourceFrame{Signal: 1, ItemCount: 1, OTLP: []byte("definitely not OTLP \xff\xff\xff\xff")}, "not a valid OTLP traces request"},
		{"wrong item count", &sdp.ResourceFrame{Signal: 1, ItemCount: 4, OTLP: good.otlp}, "holds 3 items but the frame's item_count is 4"},
		{"metrics sent as logs", &sdp.ResourceFrame{Signal: 3, ItemCount: 2, OTLP: metricsPayload(t, 0, "a", 2).otlp}, "item_count is 2"},
		{"no such signal", &sdp.ResourceFrame{Signal: 5, ItemCount: 0, OTLP: nil}, "not signal-5"},
		{"profiles with another item count", &sdp.ResourceFrame{Signal: 4, ItemCount: 1, OTLP: profilesPayload(t, 0, "a", 3).otlp}, "holds 3 items but the frame's item_count is 1"},
	} {
		st, detail := s.consume(tc.frame)
		if st != sdp.AckRejected || !strings.Contains(detail, tc.detail) {
			t.Errorf("%s: %v %q, want rejected saying %q", tc.name, st, detail, tc.detail)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("rejected payloads created %v", entries)
	}
	if st, detail := s.consume(recordFrame(t, good)); st != sdp.AckAccepted {
		t.Fatalf("valid payload: %v %s", st, detail)
	}
	if got := readRecords(t, filepath.Join(dir, FileName(0, 1))); len(got) != 1 {
		t.Errorf("%d records, want the valid one only", len(got))
	}
}

func TestFileModeRejectionReachesTheSender(t *testing.T) {
	dir := t.TempDir()
	eps := endpoints(t)
	_, stop := start(t, Config{Listen: eps[:1], Mode: ModeFile, Dir: dir})
	bad := payload{signal: 1, shard: 0, items: 1, otlp: []byte("garbage")}
	errs := deliver(t, eps[0], 0, []payload{bad, tracesPayload(t, 0, "a", 1)})
	if !errors.Is(errs[0], transport.ErrRejected) || !strings.Contains(errs[0].Error(), "not a valid OTLP traces request") {
		t.Errorf("garbage payload settled with %v", errs[0])
	}
	if errs[1] != nil {
		t.Errorf("valid payload settled with %v", errs[1])
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := readRecords(t, filepath.Join(dir, FileName(0, 1))); len(got) != 1 {
		t.Errorf("%d records, want 1", len(got))
	}
}

func TestFileModeBoundsOpenFilesAndClosesIdleOnes(t *testing.T) {
	dir := t.TempDir()
	s, err := newFileSink(dir, fileOptions{maxOpen: 2, idleAfter: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	for round := range 2 {
		for shard := range uint32(5) {
			if st, detail := s.consume(recordFrame(t, tracesPayload(t, shard, "a", 1))); st != sdp.AckAccepted {
				t.Fatalf("shard %d: %v %s", shard, st, detail)
			}
			if n := s.openFiles(); n > 2 {
				t.Fatalf("%d files open, want at most 2", n)
			}
		}
		for shard := range uint32(5) {
			if got := readRecords(t, filepath.Join(dir, FileName(shard, 1))); len(got) != round+1 {
				t.Errorf("shard %d: %d records after round %d", shard, len(got), round)
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.openFiles() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d files still open long after the idle timeout", s.openFiles())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFileModeWithEveryFileBusyAnswersRetry(t *testing.T) {
	s, err := newFileSink(t.TempDir(), fileOptions{maxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	rf, err := s.acquire(FileName(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	st, detail := s.consume(recordFrame(t, tracesPayload(t, 1, "a", 1)))
	if st != sdp.AckRetry || !strings.Contains(detail, "-max-open-files") {
		t.Errorf("%v %q, want retry naming -max-open-files", st, detail)
	}
	s.release(rf, false)
	if st, _ := s.consume(recordFrame(t, tracesPayload(t, 1, "a", 1))); st != sdp.AckAccepted {
		t.Errorf("after release: %v", st)
	}
}

// syncCountingFile counts syncs and the bytes written before the last one.
type syncCountingFile struct {
	outputFile
	mu      sync.Mutex
	written int
	synced  int
	syncs   int
	fail    bool
}

func (f *syncCountingFile) Write(p []byte) (int, error) {
	n, err := f.outputFile.Write(p)
	f.mu.Lock()
	f.written += n
	f.mu.Unlock()
	return n, err
}

func (f *syncCountingFile) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return errors.New("I/O error")
	}
	f.syncs++
	f.synced = f.written
	return f.outputFile.Sync()
}

func TestFsyncSyncsBeforeTheAcksInBatches(t *testing.T) {
	dir := t.TempDir()
	eps := endpoints(t)
	s, err := New(Config{Listen: eps[:1], Mode: ModeFile, Dir: dir, Fsync: true, Logger: zaptest.NewLogger(t, zaptest.Level(zap.ErrorLevel))})
	if err != nil {
		t.Fatal(err)
	}
	fs := s.sink.(*fileSink)
	var files []*syncCountingFile
	var filesMu sync.Mutex
	open := fs.open
	fs.open = func(path string) (outputFile, int64, error) {
		f, size, err := open(path)
		cf := &syncCountingFile{outputFile: f}
		filesMu.Lock()
		files = append(files, cf)
		filesMu.Unlock()
		return cf, size, err
	}
	runDone := make(chan error, 1)
	runCtx, stopRun := context.WithCancel(t.Context())
	go func() { runDone <- s.Run(runCtx) }()
	defer func() { stopRun(); <-runDone }()

	var payloads []payload
	for i := range 200 {
		payloads = append(payloads, tracesPayload(t, 0, "svc", 1+i%3))
	}
	for i, err := range deliver(t, eps[0], 0, payloads) {
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	filesMu.Lock()
	f := files[0]
	filesMu.Unlock()
	f.mu.Lock()
	syncs, synced, written := f.syncs, f.synced, f.written
	f.mu.Unlock()
	t.Logf("200 frames: %d syncs", syncs)
	if syncs == 0 || synced != written {
		t.Errorf("%d syncs; %d of %d bytes synced when every frame was acknowledged", syncs, synced, written)
	}

	// A failing sync turns the acceptance into retry: the sender keeps the
	// frame until a later sync succeeds.
	f.mu.Lock()
	f.fail = true
	f.mu.Unlock()
	c, err := transport.NewClient(transport.ClientSettings{Endpoint: eps[0], Sender: "t", Shard: 0, ShardCount: 1,
		InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	settled := make(chan error, 1)
	if err := c.Send([]transport.Frame{tracesPayload(t, 0, "late", 1).frame(t)}, func(err error) { settled <- err }); err != nil {
		t.Fatal(err)
	}
	// Wait for the sidecar to answer retry at least once, however long the
	// client takes to connect on a busy machine.
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats().Acks["retry"] == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no retry answered while syncs failed: %+v", s.Stats().Acks)
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-settled:
		t.Fatalf("frame settled (%v) while syncs fail", err)
	default:
	}
	f.mu.Lock()
	f.fail = false
	f.mu.Unlock()
	select {
	case err := <-settled:
		if err != nil {
			t.Errorf("after syncs recover: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("frame not settled after syncs recovered")
	}
	if err := c.Shutdown(t.Context()); err != nil {
		t.Error(err)
	}
	if st := s.Stats(); st.Acks["retry"] == 0 {
		t.Errorf("no retry answered while syncs failed: %+v", st.Acks)
	}
}

func TestForwardModeCutsLongGRPCMessages(t *testing.T) {
	long := strings.Repeat("x", 200_000)
	_, addr := startOTLPServer(t, func(string, int) error { return status.Error(codes.InvalidArgument, long) })
	eps := endpoints(t)
	start(t, Config{Listen: eps[:1], Mode: ModeForward, ForwardEndpoint: addr, ForwardTimeout: 5 * time.Second})
	errs := deliver(t, eps[0], 0, []payload{tracesPayload(t, 0, "a", 1)})
	if !errors.Is(errs[0], transport.ErrRejected) || len(errs[0].Error()) > 2*transport.MaxLoggedPeerString || !strings.Contains(errs[0].Error(), "truncated") {
		t.Errorf("rejection of %d bytes: %.300v", len(errs[0].Error()), errs[0])
	}
}

func TestSidecarSocketModeAndConnectionLimit(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []os.FileMode{0, 0o660} {
		path := filepath.Join(dir, "s.sock")
		statsFile := filepath.Join(dir, "stats.json")
		s, stop := start(t, Config{Listen: []string{"unix://" + path}, Mode: ModeCount, SocketMode: mode, MaxConns: 1, HelloTimeout: time.Minute, StatsFile: statsFile})
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if mode != 0 {
			want = mode
		}
		if fi.Mode().Perm() != want {
			t.Errorf("socket mode %v, want %v", fi.Mode().Perm(), want)
		}
		first, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		hello, _ := (&sdp.Hello{ProtocolVersion: 1, Sender: "t", ShardCount: 1}).AppendFrame(nil)
		if _, err := first.Write(hello); err != nil {
			t.Fatal(err)
		}
		// Past its Hello and not quiet for a second yet, the first connection
		// is not given up for a new one: the newcomer's Hello is refused.
		deadline := time.Now().Add(5 * time.Second)
		for c := s.Stats().Connections; (c.Active != 1 || c.AwaitingHello != 0) && time.Now().Before(deadline); c = s.Stats().Connections {
			time.Sleep(5 * time.Millisecond)
		}
		second, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := second.Write(hello); err != nil {
			t.Fatal(err)
		}
		second.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := second.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("connection over the limit: read %v, want EOF", err)
		}
		first.Close()
		second.Close()
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if c := readStats(t, statsFile).Connections; c.Refused != 1 || c.Accepted != 2 {
			t.Errorf("stats file connections %+v, want 2 accepted (one on probation) and 1 refused", c)
		}
	}
}

// writePKI writes a CA, a server certificate for 127.0.0.1 and its key,
// and returns their paths and a client TLS configuration with a client
// certificate from the same CA.
func writePKI(t *testing.T) (caFile, certFile, keyFile string, client *tls.Config) {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "leaf"}, NotBefore: time.Now().Add(-time.Hour),
			NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	srvDER, srvKey := leaf(2, x509.ExtKeyUsageServerAuth)
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	cliDER, cliKey := leaf(3, x509.ExtKeyUsageClientAuth)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	client = &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{{Certificate: [][]byte{cliDER}, PrivateKey: cliKey}}, MinVersion: tls.VersionTLS12}
	return write("ca.pem", "CERTIFICATE", caDER), write("server.pem", "CERTIFICATE", srvDER), write("server.key", "EC PRIVATE KEY", keyDER), client
}

func TestSidecarServesTLSAndVerifiesClientCertificates(t *testing.T) {
	caFile, certFile, keyFile, clientTLS := writePKI(t)
	eps := endpoints(t)
	statsFile := filepath.Join(t.TempDir(), "stats.json")
	_, stop := start(t, Config{Listen: eps, Mode: ModeCount, TLSCert: certFile, TLSKey: keyFile, TLSClientCA: caFile, StatsFile: statsFile})

	send := func(endpoint string, cfg *tls.Config) error {
		c, err := transport.NewClient(transport.ClientSettings{Endpoint: endpoint, Sender: "t", Shard: 0, ShardCount: 1, TLS: cfg,
			InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		c.Start()
		settled := make(chan error, 1)
		if err := c.Send([]transport.Frame{tracesPayload(t, 0, "a", 2).frame(t)}, func(err error) { settled <- err }); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-settled:
			c.Shutdown(t.Context())
			return err
		case <-time.After(500 * time.Millisecond):
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			return c.Shutdown(ctx)
		}
	}
	if err := send(eps[1], clientTLS); err != nil {
		t.Errorf("TLS client with a certificate: %v", err)
	}
	noCert := clientTLS.Clone()
	noCert.Certificates = nil
	if err := send(eps[1], noCert); !errors.Is(err, transport.ErrUndelivered) {
		t.Errorf("TLS client without a certificate: %v, want undelivered", err)
	}
	if err := send(eps[1], nil); !errors.Is(err, transport.ErrUndelivered) {
		t.Errorf("plaintext client to the TLS endpoint: %v, want undelivered", err)
	}
	// The unix endpoint stays plaintext, protected by its mode.
	if err := send(eps[0], nil); err != nil {
		t.Errorf("plaintext client on the unix endpoint: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	st := readStats(t, statsFile)
	if st.Totals["all"].Frames != 2 || st.Connections.ProtocolErrors < 2 {
		t.Errorf("stats: %d frames, connections %+v; want 2 frames and the refused handshakes counted", st.Totals["all"].Frames, st.Connections)
	}
}

func TestParseHardeningFlags(t *testing.T) {
	cfg, err := ParseFlags([]string{"-listen", "tcp://127.0.0.1:1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns != transport.DefaultMaxConns || cfg.HelloTimeout != transport.DefaultHelloTimeout || cfg.IdleTimeout != transport.DefaultIdleTimeout ||
		cfg.SocketMode != 0o600 || cfg.MaxOpenFiles != DefaultMaxOpenFiles || cfg.FileIdleTimeout != DefaultFileIdleTimeout || cfg.Fsync ||
		cfg.FrameTimeout != transport.DefaultFrameTimeout || cfg.ReadBudget != transport.DefaultReadBudget {
		t.Errorf("defaults %+v", cfg)
	}
	cfg, err = ParseFlags([]string{"-listen", "tcp://127.0.0.1:1,unix:///tmp/x.sock", "-mode", "file", "-dir", "/tmp/o", "-fsync",
		"-max-conns", "7", "-hello-timeout", "2s", "-idle-timeout", "1m30s", "-socket-mode", "0660",
		"-max-open-files", "9", "-file-idle-timeout", "5s", "-tls-cert", "c.pem", "-tls-key", "k.pem", "-tls-client-ca", "ca.pem",
		"-frame-timeout", "7s", "-read-budget", "16MiB"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns != 7 || cfg.HelloTimeout != 2*time.Second || cfg.IdleTimeout != 90*time.Second || cfg.SocketMode != 0o660 ||
		cfg.MaxOpenFiles != 9 || cfg.FileIdleTimeout != 5*time.Second || !cfg.Fsync || cfg.TLSCert != "c.pem" || cfg.TLSKey != "k.pem" || cfg.TLSClientCA != "ca.pem" ||
		cfg.FrameTimeout != 7*time.Second || cfg.ReadBudget != 16<<20 {
		t.Errorf("parsed %+v", cfg)
	}
	tcp := []string{"-listen", "tcp://127.0.0.1:1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-hello-timeout", "5"}, "missing unit"},
		{[]string{"-idle-timeout", "10"}, "missing unit"},
		{[]string{"-hello-timeout", "0"}, "-hello-timeout 0s: must be positive"},
		{[]string{"-idle-timeout", "-1s"}, "-idle-timeout -1s: must be positive"},
		{[]string{"-max-conns", "0"}, "-max-conns 0: must be positive"},
		{[]string{"-frame-timeout", "0s"}, "-frame-timeout 0s: must be positive"},
		{[]string{"-read-budget", "0"}, "must be positive"},
		{[]string{"-read-budget", "12MB"}, "64MiB"},
		{[]string{"-read-budget", "1MiB"}, "-read-budget 1MiB: must hold at least one whole frame (2MiB)"},
		{[]string{"-max-open-files", "-3"}, "-max-open-files -3: must be positive"},
		{[]string{"-socket-mode", "0644x"}, "octal mode"},
		{[]string{"-socket-mode", "0400"}, "owner read and write"},
		{[]string{"-socket-mode", "01600"}, "owner read and write"},
		{[]string{"-fsync"}, "-fsync applies to mode file"},
		{[]string{"-tls-cert", "c.pem"}, "set both or neither"},
		{[]string{"-tls-client-ca", "ca.pem"}, "needs -tls-cert"},
	} {
		if _, err := ParseFlags(append(append([]string{}, tcp...), tc.args...), io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFlags(%q) = %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
	if _, err := ParseFlags([]string{"-listen", "unix:///tmp/x.sock", "-tls-cert", "c", "-tls-key", "k"}, io.Discard); err == nil || !strings.Contains(err.Error(), "no -listen endpoint is tcp://") {
		t.Errorf("TLS without a tcp endpoint: %v", err)
	}
}

func TestSidecarCountsHostileConnectionsAndKeepsServing(t *testing.T) {
	dir := t.TempDir()
	statsFile := filepath.Join(dir, "stats.json")
	eps := endpoints(t)
	_, stop := start(t, Config{Listen: eps, Mode: ModeFile, Dir: filepath.Join(dir, "out"), HelloTimeout: 300 * time.Millisecond, StatsFile: statsFile})
	dial := func(endpoint string) net.Conn {
		network, address, _ := transport.ParseEndpoint(endpoint)
		c, err := net.Dial(network, address)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	waitClosed := func(c net.Conn) {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("connection not closed by the sidecar: %v", err)
		}
	}
	var idle []net.Conn
	for i := range 20 {
		idle = append(idle, dial(eps[i%2]))
	}
	hello, _ := (&sdp.Hello{ProtocolVersion: 1, Sender: strings.Repeat("x", 3000), Shard: 0, ShardCount: 2}).AppendFrame(nil)
	wrongShard, _ := (&sdp.ResourceFrame{Sequence: 1, Signal: 1, Shard: 1, ItemCount: 1, OTLP: tracesPayload(t, 1, "a", 1).otlp}).AppendFrame(nil)
	hostile := [][]byte{
		[]byte("GET / HTTP/1.1\r\n\r\n"),
		{'S', 'D', 'P', '2', 1, 0, 0, 0, 0x20, 0}, // a Hello declaring 2 MiB
		append(append([]byte{}, hello...), wrongShard...),
	}
	for _, b := range hostile {
		c := dial(eps[0])
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		waitClosed(c)
	}
	// A well-behaved sender is served meanwhile and afterwards.
	good := tracesPayload(t, 0, "good", 2)
	if errs := deliver(t, eps[1], 0, []payload{good}); errs[0] != nil {
		t.Fatalf("well-behaved sender: %v", errs[0])
	}
	for _, c := range idle {
		waitClosed(c)
	}
	if errs := deliver(t, eps[0], 0, []payload{good}); errs[0] != nil {
		t.Fatalf("well-behaved sender after the Hello timeouts: %v", errs[0])
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	st := readStats(t, statsFile)
	c := st.Connections
	if c.HelloTimeouts != 20 || c.ProtocolErrors != 3 || c.Refused != 0 || c.Active != 0 || st.Totals["all"].Items != 4 {
		t.Errorf("connections %+v, %d items; want 20 Hello timeouts, 3 protocol errors and the 4 good items", c, st.Totals["all"].Items)
	}
}

func TestAtTheConnectionLimitOnlyCertificateHoldersCount(t *testing.T) {
	caFile, certFile, keyFile, clientTLS := writePKI(t)
	eps := endpoints(t)
	s, stop := start(t, Config{Listen: eps[1:], Mode: ModeCount, TLSCert: certFile, TLSKey: keyFile, TLSClientCA: caFile,
		MaxConns: 1, HelloTimeout: time.Minute})
	var connects connectCounter
	holder, err := transport.NewClient(transport.ClientSettings{Endpoint: eps[1], Sender: "holder", Shard: 0, ShardCount: 1, TLS: clientTLS,
		Observer: &connects, InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	holder.Start()
	defer holder.Shutdown(t.Context())
	send := func(i int) {
		t.Helper()
		settled := make(chan error, 1)
		if err := holder.Send([]transport.Frame{tracesPayload(t, 0, "s"+strconv.Itoa(i), 1).frame(t)}, func(err error) { settled <- err }); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-settled:
			if err != nil {
				t.Errorf("frame %d of the certificate holder: %v", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("frame %d of the certificate holder did not settle", i)
		}
	}
	send(0)
	// Peers without a certificate, or that never finish the handshake,
	// wait on probation one at a time (a newcomer within a second of the
	// one waiting is refused, later ones replace it); none takes the
	// holder's place, however quiet it is.
	time.Sleep(1100 * time.Millisecond)
	noCert := clientTLS.Clone()
	noCert.Certificates = nil
	_, address, _ := transport.ParseEndpoint(eps[1])
	for i := range 10 {
		if i%2 == 0 {
			c, err := tls.Dial("tcp", address, noCert)
			if err == nil {
				c.Write([]byte("x")) // the server's verdict on the certificate arrives with the first read
				c.Read(make([]byte, 1))
				c.Close()
			}
		} else {
			c, err := net.Dial("tcp", address)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
		}
	}
	for i := 1; i <= 5; i++ {
		send(i)
	}
	if n := connects.n.Load(); n != 1 {
		t.Errorf("the certificate holder connected %d times, want once: it lost its place", n)
	}
	st := s.Stats().Connections
	if st.Active-st.AwaitingHello != 1 || st.AwaitingHello > 1 {
		t.Errorf("connections %+v: want the holder as the only connection past its Hello, at most one on probation", st)
	}
	if err := holder.Shutdown(t.Context()); err != nil {
		t.Error(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// connectCounter is a transport.Observer that counts connections made.
type connectCounter struct{ n atomic.Int64 }

func (*connectCounter) FramesSent(uint32, transport.Sent)      {}
func (*connectCounter) AckReceived(uint32, sdp.AckStatus, int) {}
func (c *connectCounter) Connected(uint32, bool)               { c.n.Add(1) }
func (*connectCounter) Disconnected(uint32, error)             {}
func (*connectCounter) Undelivered(uint32, int, int)           {}

func TestMemoryBoundIsTheREADMEFormula(t *testing.T) {
	// 32 MiB + (max-conns + 1) × 256 KiB + read-budget, as
	// cmd/sdp-sidecar/README.md states it: of each connection's 256 KiB,
	// 128 KiB are its share of the heap and 128 KiB its read space.
	for _, tc := range []struct {
		maxConns, budget int
		want             int64
	}{
		{0, 0, 32<<20 + 257*(256<<10) + 64<<20}, // the defaults
		{64, 16 << 20, 32<<20 + 65*(256<<10) + 16<<20},
	} {
		c := Config{MaxConns: tc.maxConns, ReadBudget: tc.budget}
		if got := c.MemoryBound(); got != tc.want {
			t.Errorf("MemoryBound with -max-conns %d -read-budget %d = %d, want %d", tc.maxConns, tc.budget, got, tc.want)
		}
		if got, want := c.HeapLimit(), tc.want-int64(cmp.Or(tc.budget, 64<<20))-int64(cmp.Or(tc.maxConns, 256)+1)*(128<<10); got != want {
			t.Errorf("HeapLimit with -max-conns %d = %d, want %d", tc.maxConns, got, want)
		}
	}
}
