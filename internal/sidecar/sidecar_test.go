// SPDX-License-Identifier: Apache-2.0

package sidecar

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// payload is one OTLP request of one resource.
type payload struct {
	signal uint8
	shard  uint32
	items  int
	otlp   []byte
}

func tracesPayload(t *testing.T, shard uint32, service string, spans int) payload {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	ss := rs.ScopeSpans().AppendEmpty()
	for i := range spans {
		ss.Spans().AppendEmpty().SetName(fmt.Sprintf("%s-span-%d", service, i))
	}
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return payload{signal: 1, shard: shard, items: spans, otlp: b}
}

func metricsPayload(t *testing.T, shard uint32, service string, points int) payload {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", service)
	g := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	g.SetName("queue.depth")
	gauge := g.SetEmptyGauge()
	for i := range points {
		gauge.DataPoints().AppendEmpty().SetIntValue(int64(i))
	}
	b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	if err != nil {
		t.Fatal(err)
	}
	return payload{signal: 2, shard: shard, items: points, otlp: b}
}

func logsPayload(t *testing.T, shard uint32, service string, records int) payload {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", service)
	sl := rl.ScopeLogs().AppendEmpty()
	for i := range records {
		sl.LogRecords().AppendEmpty().Body().SetStr(fmt.Sprintf("%s record %d", service, i))
	}
	b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	return payload{signal: 3, shard: shard, items: records, otlp: b}
}

func (p payload) frame(t *testing.T) transport.Frame {
	f := sdp.ResourceFrame{Signal: p.signal, Shard: p.shard, ItemCount: uint32(p.items), OTLP: p.otlp}
	b, err := f.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	return transport.Frame{Bytes: b, Items: p.items}
}

// start runs a sidecar until the test stops it with the returned function,
// which returns Run's error.
func start(t *testing.T, cfg Config) (*Sidecar, func() error) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}
	t.Cleanup(func() { stop() })
	return s, stop
}

// endpoints returns a unix endpoint in a temporary directory and a tcp one
// on a free loopback port.
func endpoints(t *testing.T) []string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return []string{"unix://" + filepath.Join(t.TempDir(), "s.sock"), "tcp://" + addr}
}

// deliver sends payloads for shard over endpoint and returns each
// payload's settled error once all have settled.
func deliver(t *testing.T, endpoint string, shard uint32, payloads []payload) []error {
	t.Helper()
	c, err := transport.NewClient(transport.ClientSettings{
		Endpoint: endpoint, Sender: "test", Shard: shard, ShardCount: 2,
		InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		Logger: slog.New(zapslog.NewHandler(zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)).Core())),
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	errs := make([]error, len(payloads))
	var wg sync.WaitGroup
	for i, p := range payloads {
		wg.Add(1)
		if err := c.Send([]transport.Frame{p.frame(t)}, func(err error) { errs[i] = err; wg.Done() }); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return errs
}

func readStats(t *testing.T, path string) Stats {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s Stats
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("stats file is not JSON: %v\n%s", err, b)
	}
	return s
}

func TestCountModeStatsFile(t *testing.T) {
	eps := endpoints(t)
	statsFile := filepath.Join(t.TempDir(), "stats.json")
	var out bytes.Buffer
	_, stop := start(t, Config{Listen: eps, Mode: ModeCount, StatsFile: statsFile, StatsInterval: 20 * time.Millisecond, Out: &out})

	shard0 := []payload{tracesPayload(t, 0, "a", 3), tracesPayload(t, 0, "b", 4), logsPayload(t, 0, "a", 5)}
	shard1 := []payload{metricsPayload(t, 1, "c", 6), tracesPayload(t, 1, "c", 1)}
	for _, err := range deliver(t, eps[0], 0, shard0) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range deliver(t, eps[1], 1, shard1) {
		if err != nil {
			t.Fatal(err)
		}
	}
	// The periodic write shows up before exit, not final yet.
	var periodic Stats
	deadline := time.Now().Add(5 * time.Second)
	for periodic.Totals["all"].Frames != 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		if _, err := os.Stat(statsFile); err == nil {
			periodic = readStats(t, statsFile)
		}
	}
	if periodic.Final || periodic.Totals["all"].Frames != 5 {
		t.Errorf("periodic stats = %+v; want 5 frames, not final", periodic)
	}
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}

	got := readStats(t, statsFile)
	bytesOf := func(ps ...payload) uint64 {
		n := 0
		for _, p := range ps {
			n += len(p.otlp)
		}
		return uint64(n)
	}
	want := Stats{
		Shards: map[string]map[string]Counts{
			"0": {
				"traces":  {Frames: 2, Items: 7, Bytes: bytesOf(shard0[0], shard0[1])},
				"metrics": {},
				"logs":    {Frames: 1, Items: 5, Bytes: bytesOf(shard0[2])},
			},
			"1": {
				"traces":  {Frames: 1, Items: 1, Bytes: bytesOf(shard1[1])},
				"metrics": {Frames: 1, Items: 6, Bytes: bytesOf(shard1[0])},
				"logs":    {},
			},
		},
		Totals: map[string]Counts{
			"traces":  {Frames: 3, Items: 8, Bytes: bytesOf(shard0[0], shard0[1], shard1[1])},
			"metrics": {Frames: 1, Items: 6, Bytes: bytesOf(shard1[0])},
			"logs":    {Frames: 1, Items: 5, Bytes: bytesOf(shard0[2])},
			"all":     {Frames: 5, Items: 19, Bytes: bytesOf(append(shard0, shard1...)...)},
		},
		Acks:        map[string]uint64{"accepted": 5, "retry": 0, "rejected": 0},
		Connections: transport.ServerStats{Accepted: 2},
		Final:       true,
	}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("stats file\n got %s\nwant %s", gotJSON, wantJSON)
	}
	for _, line := range []string{"shard 0 traces   frames=2 items=7", "shard 1 metrics  frames=1 items=6", "total          frames=5 items=19", "connections    active=0 awaiting_hello=0 accepted=2 refused=0 evicted=0"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("printed statistics lack %q:\n%s", line, out.String())
		}
	}
}

func TestAckStatusFlag(t *testing.T) {
	eps := endpoints(t)
	statsFile := filepath.Join(t.TempDir(), "stats.json")
	_, stop := start(t, Config{Listen: eps[:1], Mode: ModeCount, AckStatus: sdp.AckRejected, StatsFile: statsFile})
	errs := deliver(t, eps[0], 0, []payload{tracesPayload(t, 0, "a", 2)})
	if !errors.Is(errs[0], transport.ErrRejected) || !strings.Contains(errs[0].Error(), "-ack-status 2") {
		t.Errorf("settled with %v, want ErrRejected naming -ack-status", errs[0])
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	s := readStats(t, statsFile)
	if s.Acks["rejected"] != 1 || s.Totals["all"].Frames != 0 {
		t.Errorf("stats = %+v; want one rejected frame and nothing accepted", s)
	}
}

// readRecords reads a file of mode file.
func readRecords(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var records [][]byte
	for len(b) > 0 {
		if len(b) < 4 {
			t.Fatalf("%s: %d stray bytes at the end", path, len(b))
		}
		n := binary.LittleEndian.Uint32(b)
		if uint64(len(b)-4) < uint64(n) {
			t.Fatalf("%s: record of %d bytes, %d left", path, n, len(b)-4)
		}
		records = append(records, b[4:4+n])
		b = b[4+n:]
	}
	return records
}

func TestFileModeWritesRecords(t *testing.T) {
	eps := endpoints(t)
	dir := filepath.Join(t.TempDir(), "out")
	_, stop := start(t, Config{Listen: eps, Mode: ModeFile, Dir: dir})
	traces := []payload{tracesPayload(t, 0, "a", 3), tracesPayload(t, 0, "b", 2)}
	logs := []payload{logsPayload(t, 0, "a", 4)}
	metrics := []payload{metricsPayload(t, 1, "c", 5)}
	for _, errs := range [][]error{
		deliver(t, eps[0], 0, append(append([]payload{}, traces...), logs...)),
		deliver(t, eps[1], 1, metrics),
	} {
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, n := range names {
		files = append(files, n.Name())
	}
	if want := "shard-0-logs.otlp shard-0-traces.otlp shard-1-metrics.otlp"; strings.Join(files, " ") != want {
		t.Errorf("files %v, want %s", files, want)
	}

	tr := readRecords(t, filepath.Join(dir, FileName(0, 1)))
	if len(tr) != 2 {
		t.Fatalf("%d trace records, want 2", len(tr))
	}
	for i, rec := range tr {
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(rec)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rec, traces[i].otlp) || td.SpanCount() != traces[i].items {
			t.Errorf("trace record %d: %d spans, identical bytes %v", i, td.SpanCount(), bytes.Equal(rec, traces[i].otlp))
		}
		svc, _ := td.ResourceSpans().At(0).Resource().Attributes().Get("service.name")
		if want := []string{"a", "b"}[i]; svc.Str() != want {
			t.Errorf("trace record %d is service %q, want %q", i, svc.Str(), want)
		}
	}
	lr := readRecords(t, filepath.Join(dir, FileName(0, 3)))
	if len(lr) != 1 {
		t.Fatalf("%d log records, want 1", len(lr))
	}
	ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(lr[0])
	if err != nil || ld.LogRecordCount() != 4 {
		t.Errorf("log record: %d records, %v", ld.LogRecordCount(), err)
	}
	mr := readRecords(t, filepath.Join(dir, FileName(1, 2)))
	if len(mr) != 1 {
		t.Fatalf("%d metric records, want 1", len(mr))
	}
	md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(mr[0])
	if err != nil || md.DataPointCount() != 5 {
		t.Errorf("metric record: %d points, %v", md.DataPointCount(), err)
	}
}

// otlpServer is an in-process OTLP/gRPC server that takes any method with
// the raw codec and records what arrived.
type otlpServer struct {
	mu       sync.Mutex
	requests map[string][][]byte
	fail     func(method string, call int) error
	calls    map[string]int
	// inspect, if set, sees every call's stream first (under mu).
	inspect func(grpc.ServerStream)
}

func (o *otlpServer) handle(_ any, stream grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(stream)
	var req []byte
	if err := stream.RecvMsg(&req); err != nil {
		return err
	}
	o.mu.Lock()
	if o.inspect != nil {
		o.inspect(stream)
	}
	o.calls[method]++
	call := o.calls[method]
	o.mu.Unlock()
	if err := o.fail(method, call); err != nil {
		return err
	}
	o.mu.Lock()
	o.requests[method] = append(o.requests[method], req)
	o.mu.Unlock()
	return stream.SendMsg(&[]byte{})
}

func startOTLPServer(t *testing.T, fail func(string, int) error) (*otlpServer, string) {
	o := &otlpServer{requests: map[string][][]byte{}, calls: map[string]int{}, fail: fail}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ForceServerCodecV2(RawCodec{}), grpc.UnknownServiceHandler(o.handle))
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return o, l.Addr().String()
}

func TestForwardMode(t *testing.T) {
	const (
		traceMethod  = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
		logsMethod   = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
		metricMethod = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
	)
	otlp, addr := startOTLPServer(t, func(method string, call int) error {
		switch {
		case method == logsMethod && call == 1:
			return status.Error(codes.Unavailable, "warming up")
		case method == metricMethod:
			return status.Error(codes.InvalidArgument, "no metrics here")
		}
		return nil
	})
	eps := endpoints(t)
	statsFile := filepath.Join(t.TempDir(), "stats.json")
	_, stop := start(t, Config{Listen: eps[:1], Mode: ModeForward, ForwardEndpoint: addr, ForwardTimeout: 5 * time.Second, StatsFile: statsFile})

	tr, lg, mt := tracesPayload(t, 0, "a", 3), logsPayload(t, 0, "a", 2), metricsPayload(t, 0, "a", 4)
	errs := deliver(t, eps[0], 0, []payload{tr, lg, mt})
	if errs[0] != nil || errs[1] != nil {
		t.Errorf("traces settled with %v, logs with %v; want both accepted", errs[0], errs[1])
	}
	if !errors.Is(errs[2], transport.ErrRejected) || !strings.Contains(errs[2].Error(), "InvalidArgument") {
		t.Errorf("metrics settled with %v, want ErrRejected for InvalidArgument", errs[2])
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	otlp.mu.Lock()
	defer otlp.mu.Unlock()
	if got := otlp.requests[traceMethod]; len(got) != 1 || !bytes.Equal(got[0], tr.otlp) {
		t.Errorf("trace requests %d, want the payload once, byte for byte", len(got))
	} else if td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(got[0]); err != nil || td.SpanCount() != 3 {
		t.Errorf("forwarded traces: %d spans, %v", td.SpanCount(), err)
	}
	if got := otlp.requests[logsMethod]; len(got) != 1 || otlp.calls[logsMethod] != 2 {
		t.Errorf("logs: %d stored after %d calls; want 1 after a retried Unavailable", len(got), otlp.calls[logsMethod])
	} else if ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(got[0]); err != nil || ld.LogRecordCount() != 2 {
		t.Errorf("forwarded logs: %d records, %v", ld.LogRecordCount(), err)
	}
	if otlp.calls[metricMethod] != 1 {
		t.Errorf("metrics called %d times, want once (rejected, not retried)", otlp.calls[metricMethod])
	}
	s := readStats(t, statsFile)
	if s.Acks["accepted"] != 2 || s.Acks["retry"] != 1 || s.Acks["rejected"] != 1 || s.Totals["all"].Items != 5 {
		t.Errorf("stats = %+v", s)
	}
}

func TestParseFlags(t *testing.T) {
	cfg, err := ParseFlags([]string{
		"-listen", "unix:///tmp/a.sock,tcp://127.0.0.1:7001", "-listen", "tcp://127.0.0.1:7002",
		"-mode", "file", "-dir", "/tmp/out", "-ack-delay", "5ms", "-ack-status", "1",
		"-stats-interval", "1s", "-stats-file", "/tmp/s.json", "-cpuprofile", "/tmp/cpu.pprof",
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Listen, " ") != "unix:///tmp/a.sock tcp://127.0.0.1:7001 tcp://127.0.0.1:7002" ||
		cfg.Mode != ModeFile || cfg.Dir != "/tmp/out" || cfg.AckDelay != 5*time.Millisecond ||
		cfg.AckStatus != sdp.AckRetry || cfg.StatsInterval != time.Second || cfg.StatsFile != "/tmp/s.json" ||
		cfg.CPUProfile != "/tmp/cpu.pprof" {
		t.Errorf("parsed %+v", cfg)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "no endpoint"},
		{[]string{"-listen", "udp://x:1"}, "invalid endpoint"},
		{[]string{"-listen", "tcp://127.0.0.1:1", "-mode", "print"}, "unknown mode"},
		{[]string{"-listen", "tcp://127.0.0.1:1", "-mode", "file"}, "needs -dir"},
		{[]string{"-listen", "tcp://127.0.0.1:1", "-mode", "forward"}, "needs -forward-endpoint"},
		{[]string{"-listen", "tcp://127.0.0.1:1", "-ack-status", "3"}, "want 0, 1 or 2"},
		{[]string{"-listen", "tcp://127.0.0.1:1", "extra"}, "unexpected arguments"},
		{[]string{"-listen", "tcp://127.0.0.1:1", "-ack-delay", "-1s"}, "-ack-delay -1s: must not be negative"},
		{[]string{"-listen", "tcp://127.0.0.1:1", "-stats-interval", "-2s"}, "-stats-interval -2s: must not be negative"},
	} {
		if _, err := ParseFlags(tc.args, io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFlags(%q) = %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}

// failingFile is an output file whose next write stores only half of the
// record and fails, as a full disk does; truncateErr makes the undo fail too.
type failingFile struct {
	outputFile
	failWrite   bool
	truncateErr error
}

func (f *failingFile) Write(p []byte) (int, error) {
	if !f.failWrite {
		return f.outputFile.Write(p)
	}
	f.failWrite = false
	n, _ := f.outputFile.Write(p[:len(p)/2])
	return n, errors.New("no space left on device")
}

func (f *failingFile) Truncate(size int64) error {
	if f.truncateErr != nil {
		return f.truncateErr
	}
	return f.outputFile.Truncate(size)
}

func recordFrame(t *testing.T, p payload) *sdp.ResourceFrame {
	t.Helper()
	return &sdp.ResourceFrame{Sequence: 1, Signal: p.signal, Shard: p.shard, ItemCount: uint32(p.items), OTLP: p.otlp}
}

func TestFileModeFailedWriteLeavesOnlyWholeRecords(t *testing.T) {
	dir := t.TempDir()
	s, err := newFileSink(dir, fileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	var injected *failingFile
	open := s.open
	s.open = func(path string) (outputFile, int64, error) {
		f, size, err := open(path)
		injected = &failingFile{outputFile: f}
		return injected, size, err
	}
	a, b := tracesPayload(t, 0, "a", 3), tracesPayload(t, 0, "b", 2)
	path := filepath.Join(dir, FileName(0, a.signal))

	if status, detail := s.consume(recordFrame(t, a)); status != sdp.AckAccepted {
		t.Fatalf("first record: status %v %s", status, detail)
	}
	injected.failWrite = true
	if status, _ := s.consume(recordFrame(t, b)); status != sdp.AckRetry {
		t.Fatalf("failed write answered %v, want retry", status)
	}
	if got := readRecords(t, path); len(got) != 1 || !bytes.Equal(got[0], a.otlp) {
		t.Fatalf("after the failed write the file holds %d records, want only the first", len(got))
	}
	// The client sends the frame again; the file stays readable.
	if status, detail := s.consume(recordFrame(t, b)); status != sdp.AckAccepted {
		t.Fatalf("retried record: status %v %s", status, detail)
	}
	if got := readRecords(t, path); len(got) != 2 || !bytes.Equal(got[0], a.otlp) || !bytes.Equal(got[1], b.otlp) {
		t.Fatalf("file holds %d records, want the two whole ones", len(got))
	}

	// When the partial record cannot be removed, nothing more is appended
	// behind it: every later frame for that file is answered retry.
	injected.failWrite = true
	injected.truncateErr = errors.New("read-only file system")
	if status, _ := s.consume(recordFrame(t, a)); status != sdp.AckRetry {
		t.Fatalf("failed write answered %v, want retry", status)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	injected.truncateErr = nil
	if status, _ := s.consume(recordFrame(t, a)); status != sdp.AckRetry {
		t.Fatalf("write behind a partial record answered %v, want retry", status)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() != before.Size() {
		t.Fatalf("file grew from %d to %d bytes behind a partial record", before.Size(), after.Size())
	}
}

func TestFileModeConsumeAfterCloseAnswersRetry(t *testing.T) {
	// Run closes the sink even when a handler outlived the server's
	// shutdown; that handler's late frames must get an answer, not a panic.
	s, err := newFileSink(t.TempDir(), fileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := tracesPayload(t, 0, "a", 1)
	if status, _ := s.consume(recordFrame(t, p)); status != sdp.AckAccepted {
		t.Fatalf("status %v before close", status)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	for _, shard := range []uint32{0, 1} { // an open file and a new one
		p := tracesPayload(t, shard, "a", 1)
		if status, detail := s.consume(recordFrame(t, p)); status != sdp.AckRetry {
			t.Errorf("shard %d after close: status %v %q, want retry", shard, status, detail)
		}
	}
}

func TestAckDelayFlagDelaysEveryAck(t *testing.T) {
	const delay = 150 * time.Millisecond
	eps := endpoints(t)
	s, _ := start(t, Config{Listen: eps[:1], Mode: ModeCount, AckDelay: delay})
	began := time.Now()
	errs := deliver(t, eps[0], 0, []payload{tracesPayload(t, 0, "a", 1), tracesPayload(t, 0, "b", 1)})
	// A lower bound only: the acks may not come sooner than the delay.
	if elapsed := time.Since(began); elapsed < delay {
		t.Errorf("frames acked after %s, before the %s ack delay", elapsed, delay)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("frame %d settled with %v", i, err)
		}
	}
	if got := s.Stats().Acks["accepted"]; got != 2 {
		t.Errorf("%d accepted acks, want 2", got)
	}
}

func TestAckStatusRetryMakesTheSenderSendAgain(t *testing.T) {
	eps := endpoints(t)
	s, _ := start(t, Config{Listen: eps[1:], Mode: ModeCount, AckStatus: sdp.AckRetry})
	c, err := transport.NewClient(transport.ClientSettings{
		Endpoint: eps[1], Sender: "test", Shard: 0, ShardCount: 1,
		InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		Logger: slog.New(zapslog.NewHandler(zaptest.NewLogger(t, zaptest.Level(zap.ErrorLevel)).Core())),
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	settled := make(chan error, 1)
	if err := c.Send([]transport.Frame{tracesPayload(t, 0, "a", 3).frame(t)}, func(err error) { settled <- err }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats().Acks["retry"] < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("sidecar answered retry %d times; the sender did not send again", s.Stats().Acks["retry"])
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := s.Stats().Totals["all"].Frames; got != 0 {
		t.Errorf("%d frames counted as handled; with -ack-status 1 none is", got)
	}
	// The sidecar never accepts: shutdown gives the frame up, and says so.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.Shutdown(ctx); !errors.Is(err, transport.ErrUndelivered) {
		t.Errorf("Shutdown = %v, want ErrUndelivered", err)
	}
	if err := <-settled; !errors.Is(err, transport.ErrUndelivered) {
		t.Errorf("frame settled with %v, want ErrUndelivered", err)
	}
}

// A sidecar whose statistics did not change since its last report neither
// rewrites the stats file nor prints them again; a frame makes it report.
func TestIdleSidecarDoesNotRewriteItsStats(t *testing.T) {
	eps := endpoints(t)
	statsFile := filepath.Join(t.TempDir(), "stats.json")
	var out syncBuffer
	_, stop := start(t, Config{Listen: eps[:1], Mode: ModeCount, StatsFile: statsFile, StatsInterval: 5 * time.Millisecond, Out: &out})
	inode := func() uint64 {
		fi, err := os.Stat(statsFile)
		if err != nil {
			return 0
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	deadline := time.Now().Add(5 * time.Second)
	for inode() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	first, printed := inode(), out.Len()
	if first == 0 {
		t.Fatal("no stats file written")
	}
	time.Sleep(100 * time.Millisecond) // twenty intervals with nothing new
	if inode() != first || out.Len() != printed {
		t.Fatalf("idle statistics reported again: file replaced %v, %d more bytes printed", inode() != first, out.Len()-printed)
	}
	if errs := deliver(t, eps[0], 0, []payload{tracesPayload(t, 0, "a", 2)}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	// Read the file, not its inode: a second rewrite may get the first
	// file's inode number back once that was freed.
	deadline = time.Now().Add(5 * time.Second)
	for readStats(t, statsFile).Totals["all"].Items != 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if s := readStats(t, statsFile); s.Totals["all"].Items != 2 || s.Final {
		t.Errorf("a frame did not make the sidecar rewrite its statistics: %+v", s.Totals["all"])
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if s := readStats(t, statsFile); !s.Final || s.Totals["all"].Items != 2 {
		t.Errorf("final statistics %+v, want final with 2 items", s.Totals["all"])
	}
}

// TestReportNowWritesCurrentStatistics: without an interval, the stats
// file is written only when asked (SIGUSR1 in cmd/sdp-sidecar) and at exit.
func TestReportNowWritesCurrentStatistics(t *testing.T) {
	eps := endpoints(t)
	statsFile := filepath.Join(t.TempDir(), "stats.json")
	ask := make(chan os.Signal, 1)
	var out syncBuffer
	_, stop := start(t, Config{Listen: eps[:1], Mode: ModeCount, StatsFile: statsFile, ReportNow: ask, Out: &out})
	if errs := deliver(t, eps[0], 0, []payload{tracesPayload(t, 0, "a", 3)}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := os.Stat(statsFile); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stats file written before it was asked for (err %v)", err)
	}
	ask <- syscall.SIGUSR1
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(statsFile); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if s := readStats(t, statsFile); s.Final || s.Totals["all"].Items != 3 {
		t.Errorf("stats when asked: %+v final %v, want 3 items, not final", s.Totals["all"], s.Final)
	}
	if !strings.Contains(out.String(), "total          frames=1 items=3") {
		t.Errorf("printed statistics when asked: %q", out.String())
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if s := readStats(t, statsFile); !s.Final {
		t.Error("final statistics not written at exit")
	}
}

// syncBuffer is a bytes.Buffer safe for the sidecar's goroutine and the
// test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
