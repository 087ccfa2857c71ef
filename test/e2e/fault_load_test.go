// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// spanID is the unique id of one span the load client sent.
type spanID [8]byte

// loadSettings shapes the traffic of a load client: Senders goroutines each
// send a request, wait for its answer, pause Interval, and so on. Each
// request holds Resources resources (service names cycling through
// Services distinct ones, so that they spread over the shards) of Spans
// spans each.
type loadSettings struct {
	Senders   int
	Resources int
	Spans     int
	Services  int
	Interval  time.Duration
	// Timeout bounds each Export call.
	Timeout time.Duration
	// Padding adds an attribute of this many bytes to every span, to make
	// requests larger.
	Padding int
	// Shape, when set, replaces Resources, Spans, Services and Padding:
	// every request holds exactly these resources.
	Shape []resourceShape
	// Requests, when positive, is how many requests each sender sends
	// before it stops on its own.
	Requests int
	// IDBase offsets the span ids, so that several load clients of one
	// test send distinct ids.
	IDBase uint64
	// TraceSpans, when positive, puts every run of TraceSpans consecutive
	// spans of a load client in one trace, numbered without IDBase: the
	// load clients of one test then send spans of the same traces, and a
	// request holds spans of several traces across its resources. Zero
	// gives every span a trace of its own.
	TraceSpans int
}

// resourceShape is one resource of a shaped request.
type resourceShape struct {
	Service string
	Spans   int
	Padding int
}

// smallLoad is the traffic of most scenarios: about 100 requests and 4,000
// spans a second at most, little enough for two shared cores.
var smallLoad = loadSettings{Senders: 4, Resources: 4, Spans: 10, Services: 8, Interval: 25 * time.Millisecond, Timeout: 5 * time.Second}

// load is a running load client. Every span has a unique span id; a span
// is acked when the Export call that carried it returned OK.
type load struct {
	settings  loadSettings
	conn      *grpc.ClientConn
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	done      chan struct{} // closed when every sender has returned
	closeOnce sync.Once
	next      atomic.Uint64

	mu       sync.Mutex
	sent     int
	acked    map[spanID]struct{}
	requests int
	okCalls  int
	failures map[string]int // by gRPC code
	lastErr  error
}

// startLoad starts sending traces to the Collector's OTLP/gRPC endpoint
// until stop.
func startLoad(t *testing.T, endpoint string, s loadSettings) *load {
	t.Helper()
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("gRPC client for %s: %v", endpoint, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{settings: s, conn: conn, cancel: cancel, done: make(chan struct{}),
		acked: map[spanID]struct{}{}, failures: map[string]int{}}
	for sender := range s.Senders {
		l.wg.Add(1)
		go l.run(ctx, sender)
	}
	go func() {
		l.wg.Wait()
		close(l.done)
	}()
	// A test that fails half-way leaves no sender behind (TestMain checks
	// for leaked goroutines).
	t.Cleanup(func() { l.stop() })
	return l
}

func (l *load) run(ctx context.Context, sender int) {
	defer l.wg.Done()
	client := ptraceotlp.NewGRPCClient(l.conn)
	for round := 0; ctx.Err() == nil && (l.settings.Requests <= 0 || round < l.settings.Requests); round++ {
		req, ids := l.request(sender*l.settings.Resources + round*l.settings.Senders*l.settings.Resources)
		callCtx, cancel := context.WithTimeout(ctx, l.settings.Timeout)
		_, err := client.Export(callCtx, req)
		cancel()
		if ctx.Err() != nil && err != nil {
			// Cut off by stop: neither acked nor a failure of the Collector.
			l.record(ids, nil, true)
			return
		}
		l.record(ids, err, false)
		select {
		case <-ctx.Done():
			return
		case <-time.After(l.settings.Interval):
		}
	}
}

// request builds one request of fresh spans; firstService picks the
// services of its resources when the load has no Shape.
func (l *load) request(firstService int) (ptraceotlp.ExportRequest, []spanID) {
	s := l.settings
	shape := s.Shape
	if len(shape) == 0 {
		for r := range s.Resources {
			shape = append(shape, resourceShape{Service: fmt.Sprintf("fault-svc-%d", (firstService+r)%s.Services), Spans: s.Spans, Padding: s.Padding})
		}
	}
	td := ptrace.NewTraces()
	var ids []spanID
	now := pcommon.NewTimestampFromTime(time.Now())
	for _, res := range shape {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", res.Service)
		spans := rs.ScopeSpans().AppendEmpty()
		spans.Scope().SetName("faulttest")
		pad := strings.Repeat("x", res.Padding)
		for range res.Spans {
			n := l.next.Add(1)
			id := spanIDOf(s.IDBase + n)
			span := spans.Spans().AppendEmpty()
			span.SetName("op")
			span.SetSpanID(pcommon.SpanID(id))
			var trace pcommon.TraceID
			copy(trace[:], id[:])
			if s.TraceSpans > 0 {
				shared := spanIDOf((n - 1) / uint64(s.TraceSpans))
				copy(trace[:], shared[:])
				trace[8] = 0x5a // not all zero in either half
			}
			trace[15] = 1
			span.SetTraceID(trace)
			span.SetStartTimestamp(now)
			span.SetEndTimestamp(now)
			if pad != "" {
				span.Attributes().PutStr("padding", pad)
			}
			ids = append(ids, id)
		}
	}
	return ptraceotlp.NewExportRequestFromTraces(td), ids
}

func spanIDOf(n uint64) spanID {
	var id spanID
	binary.BigEndian.PutUint64(id[:], n)
	return id
}

func (l *load) record(ids []spanID, err error, cutOff bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent += len(ids)
	l.requests++
	switch {
	case cutOff:
		l.failures["cut off by the end of the test"]++
	case err != nil:
		l.failures[status.Code(err).String()]++
		l.lastErr = err
	default:
		l.okCalls++
		for _, id := range ids {
			l.acked[id] = struct{}{}
		}
	}
}

// stop stops the senders (a call in progress is cut off and not counted
// as acked) and returns what was sent and acked.
func (l *load) stop() loadResult {
	l.cancel()
	l.wg.Wait()
	l.closeOnce.Do(func() { l.conn.Close() })
	l.mu.Lock()
	defer l.mu.Unlock()
	return loadResult{
		Sent: l.sent, Acked: l.acked, Requests: l.requests, OK: l.okCalls,
		Failures: l.failures, LastErr: l.lastErr,
	}
}

// finished is closed once every sender has sent its Requests.
func (l *load) finished() <-chan struct{} { return l.done }

// ackedSoFar returns how many spans were acked so far.
func (l *load) ackedSoFar() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// loadResult is what a load client sent and what the Collector acked.
type loadResult struct {
	Sent     int
	Acked    map[spanID]struct{}
	Requests int
	OK       int
	Failures map[string]int
	LastErr  error
}

func (r loadResult) String() string {
	codes := make([]string, 0, len(r.Failures))
	for code, n := range r.Failures {
		codes = append(codes, fmt.Sprintf("%s=%d", code, n))
	}
	sort.Strings(codes)
	s := fmt.Sprintf("requests=%d ok=%d failed=[%s]", r.Requests, r.OK, strings.Join(codes, " "))
	if r.LastErr != nil {
		s += fmt.Sprintf(" last error: %v", r.LastErr)
	}
	return s
}
