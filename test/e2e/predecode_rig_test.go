// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// startProc starts bin with testbin.Start and, at cleanup, resumes it (a
// test may have stopped it with SIGSTOP) and stops it with SIGTERM so that it
// shuts down cleanly, showing its log's tail when the test failed.
func startProc(t *testing.T, dir, name, bin string, args ...string) *testbin.Process {
	t.Helper()
	p := testbin.Start(t, dir, name, bin, args, nil)
	// Registered after testbin.Start's own cleanup, so it runs first: the
	// SIGKILL there is only for a process that did not stop here.
	t.Cleanup(func() {
		if !p.Exited() {
			// Errors ignored: the process may exit between the check and
			// the signal.
			_ = syscall.Kill(p.Pid(), syscall.SIGCONT)
			_ = syscall.Kill(p.Pid(), syscall.SIGTERM)
			_ = p.Wait(t, 20*time.Second)
		}
		if t.Failed() {
			t.Log(p.Tail(40))
		}
	})
	return p
}

// freePort returns a free 127.0.0.1 address.
func freePort(t *testing.T) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(testbin.FreePorts(t, 1)[0]))
}

// eventually polls cond every 100 ms until it returns nil or timeout passes.
func eventually(t *testing.T, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v", timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startSidecar starts a reference sidecar in file mode on a unix socket in
// dir and returns its endpoint and output directory.
func startSidecar(t *testing.T, dir, name string) (endpoint, outDir string, p *testbin.Process) {
	t.Helper()
	socket := filepath.Join(dir, name+".sock")
	outDir = filepath.Join(dir, name)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	p = startProc(t, dir, name, testbin.Path(t, testbin.SidecarEnv), "-listen", "unix://"+socket, "-mode", "file", "-dir", outDir)
	eventually(t, 15*time.Second, func() error {
		c, err := net.Dial("unix", socket)
		if err == nil {
			c.Close()
		}
		return err
	})
	return "unix://" + socket, outDir, p
}

// sidecarTraces reads every traces record a file-mode sidecar wrote.
func sidecarTraces(outDir string) ([]ptrace.Traces, error) {
	files, err := filepath.Glob(filepath.Join(outDir, "shard-*-traces.otlp"))
	if err != nil {
		return nil, err
	}
	var all []ptrace.Traces
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for len(b) >= 4 {
			n := int(binary.LittleEndian.Uint32(b))
			if len(b) < 4+n {
				break // a record being written
			}
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(b[4 : 4+n]); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			all = append(all, req.Traces())
			b = b[4+n:]
		}
	}
	return all, nil
}

// otlpSink is an OTLP/HTTP server standing in for a downstream Collector:
// it keeps the traces it receives by URL path.
type otlpSink struct {
	srv    *http.Server
	url    string
	mu     sync.Mutex
	byPath map[string][]ptrace.Traces
}

func startSink(t *testing.T) *otlpSink {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &otlpSink{url: "http://" + l.Addr().String(), byPath: map[string][]ptrace.Traces{}}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

func (s *otlpSink) serve(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.byPath[r.URL.Path] = append(s.byPath[r.URL.Path], req.Traces())
	s.mu.Unlock()
	resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

func (s *otlpSink) traces(path string) []ptrace.Traces {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ptrace.Traces(nil), s.byPath[path]...)
}

// metricSum scrapes a Prometheus endpoint and sums the samples of name whose
// labels contain every one of labels (each as `key="value"`). A series that
// does not exist sums to 0.
func metricSum(url, name string, labels ...string) (float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, l := range labels {
			if !strings.Contains(line, l) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// postOTLP sends an OTLP/HTTP request and returns the status and Retry-After.
func postOTLP(ctx context.Context, url, contentType string, body []byte, gz bool) (int, string, error) {
	enc := ""
	if gz {
		var buf bytes.Buffer
		zw := newGzipWriter(&buf)
		_, _ = zw.Write(body)
		if err := zw.Close(); err != nil {
			return 0, "", err
		}
		body, enc = buf.Bytes(), "gzip"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", contentType)
	if enc != "" {
		req.Header.Set("Content-Encoding", enc)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}
