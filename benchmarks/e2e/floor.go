// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // gzip-compressed gRPC requests, as OTLP exporters send them
	"google.golang.org/grpc/mem"
)

// The floor is the least any OTLP gateway built on grpc-go and net/http can
// do with a request: a do-nothing OTLP server that receives it (framing,
// HTTP/2, decompression), walks it once to count its items and answers with
// an empty success response. Nothing is decoded, copied beyond what the
// servers themselves do, queued or sent on. Every Collector configuration is
// compared with it in the same rounds: a system's distance from the floor is
// what its own work costs.
//
// It counts with otlpwire, the walker the processors use, because that is
// the cheapest correct count this repository has (benchmarks/wirebench
// measures it at or below a minimal hand-written protowire walk), so the
// floor is not inflated by a slow count.

// FloorConfig configures ServeFloor.
type FloorConfig struct {
	GRPCEndpoint string // host:port for OTLP/gRPC
	HTTPEndpoint string // host:port for OTLP/HTTP (protobuf)
	// StatsFile receives the items counted so far, as JSON (FloorStats),
	// every StatsInterval and once more when the server stops.
	StatsFile     string
	StatsInterval time.Duration
	// PprofEndpoint, when set, is the host:port on which the server
	// serves its CPU and heap profiles (/debug/pprof/profile and
	// /debug/pprof/heap), as a Collector's pprof extension does.
	PprofEndpoint string
}

// FloorStats is what the floor server writes to its stats file: items
// received, by signal, and the requests it could not read.
type FloorStats struct {
	Items  map[string]int64 `json:"items"`
	Errors int64            `json:"errors"`
}

// floorCounter counts what the floor server received.
type floorCounter struct {
	items  [len(signalNames)]atomic.Int64 // by index in Signals
	errors atomic.Int64
}

func (c *floorCounter) count(signal int, b []byte) error {
	n, err := CountItems(Signals[signal], b)
	if err != nil {
		c.errors.Add(1)
		return err
	}
	c.items[signal].Add(int64(n))
	return nil
}

func (c *floorCounter) stats() FloorStats {
	s := FloorStats{Items: make(map[string]int64, len(Signals)), Errors: c.errors.Load()}
	for i, name := range Signals {
		s.Items[name] = c.items[i].Load()
	}
	return s
}

// ServeFloor runs the floor server until ctx is done, then stops both
// servers gracefully and writes the final stats.
func ServeFloor(ctx context.Context, cfg FloorConfig) error {
	if cfg.StatsInterval <= 0 {
		cfg.StatsInterval = 100 * time.Millisecond
	}
	c := &floorCounter{}
	grpcLis, err := net.Listen("tcp", cfg.GRPCEndpoint)
	if err != nil {
		return err
	}
	httpLis, err := net.Listen("tcp", cfg.HTTPEndpoint)
	if err != nil {
		grpcLis.Close()
		return err
	}
	if cfg.PprofEndpoint != "" {
		stop, err := servePprof(cfg.PprofEndpoint)
		if err != nil {
			grpcLis.Close()
			httpLis.Close()
			return err
		}
		defer stop()
	}
	gs := newFloorGRPC(c)
	hs := &http.Server{Handler: newFloorHTTP(c), ReadHeaderTimeout: 10 * time.Second}

	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); errs <- gs.Serve(grpcLis) }()
	go func() {
		defer wg.Done()
		if err := hs.Serve(httpLis); !errors.Is(err, http.ErrServerClosed) {
			errs <- err
		}
	}()

	tick := time.NewTicker(cfg.StatsInterval)
	defer tick.Stop()
	var serveErr error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case serveErr = <-errs:
			break loop
		case <-tick.C:
			if err := writeFloorStats(cfg.StatsFile, c.stats()); err != nil {
				serveErr = err
				break loop
			}
		}
	}
	gs.GracefulStop()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = hs.Shutdown(shutdownCtx)
	wg.Wait()
	return errors.Join(serveErr, err, writeFloorStats(cfg.StatsFile, c.stats()))
}

// writeFloorStats replaces path atomically, so a reader never sees half a
// file.
func writeFloorStats(path string, s FloorStats) error {
	if path == "" {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadFloorStats reads a stats file of the floor server; a file that does
// not exist yet reads as nothing received.
func ReadFloorStats(path string) (FloorStats, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return FloorStats{}, nil
	}
	if err != nil {
		return FloorStats{}, err
	}
	var s FloorStats
	if err := json.Unmarshal(b, &s); err != nil {
		return FloorStats{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// floorRequest is what the floor's gRPC codec decodes an export request
// into: nothing but the signal it belongs to. The codec counts the items
// while gRPC still owns the buffers, so the request is never copied.
type floorRequest struct{ signal int }

// floorCodec counts floorRequests on the wire and marshals the empty
// response. Its name is "proto", the content type OTLP clients send.
type floorCodec struct{ c *floorCounter }

func (floorCodec) Name() string { return "proto" }

func (floorCodec) Marshal(any) (mem.BufferSlice, error) {
	// Every OTLP export response is a message whose fields are all optional:
	// zero bytes is a valid, empty one.
	return mem.BufferSlice{}, nil
}

func (f floorCodec) Unmarshal(data mem.BufferSlice, v any) error {
	req, ok := v.(*floorRequest)
	if !ok {
		return fmt.Errorf("floor codec cannot unmarshal into %T", v)
	}
	if len(data) == 1 {
		return f.c.count(req.signal, data[0].ReadOnlyData())
	}
	// A request gRPC received in several pieces: the walk needs it whole.
	return f.c.count(req.signal, data.Materialize())
}

func newFloorGRPC(c *floorCounter) *grpc.Server {
	// Stream workers, as the wirestage extension configures by default:
	// without them each request starts a goroutine and grows its stack,
	// which is no part of the least a grpc-go server can cost. The read
	// buffer stays grpc-go's 32 KiB: the OTLP receiver's 512 KiB reads an
	// SDK-sized request in half the system calls, yet costs this server
	// 10-22% more CPU with small and SDK-sized requests alike (alternating
	// rounds, benchmarks/RESULTS.md), and the floor is the cheaper server.
	s := grpc.NewServer(grpc.ForceServerCodecV2(floorCodec{c}), grpc.MaxRecvMsgSize(64<<20), grpc.NumStreamWorkers(16))
	for i, signal := range Signals {
		s.RegisterService(&grpc.ServiceDesc{
			ServiceName: grpcServices[signal],
			HandlerType: (*any)(nil),
			Methods: []grpc.MethodDesc{{
				MethodName: "Export",
				Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
					if err := dec(&floorRequest{signal: i}); err != nil {
						return nil, err
					}
					return struct{}{}, nil
				},
			}},
		}, nil)
	}
	return s
}

// floorBodyLimit bounds one HTTP request body, like a Collector's
// max_request_body_size would.
const floorBodyLimit = 64 << 20

// newFloorHTTP serves OTLP/HTTP protobuf requests on every signal's path
// (profiles on /v1development/profiles): it reads the body
// (gunzipping it when the client says so) into a reused buffer, counts and
// answers 200 with an empty protobuf response.
func newFloorHTTP(c *floorCounter) http.Handler {
	bufs := sync.Pool{New: func() any { return new(bytes.Buffer) }}
	mux := http.NewServeMux()
	for i, signal := range Signals {
		mux.HandleFunc("POST "+httpPaths[signal], func(w http.ResponseWriter, r *http.Request) {
			var body io.Reader = http.MaxBytesReader(w, r.Body, floorBodyLimit)
			if r.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				defer zr.Close()
				body = io.LimitReader(zr, floorBodyLimit)
			}
			buf := bufs.Get().(*bytes.Buffer)
			defer bufs.Put(buf)
			buf.Reset()
			if _, err := buf.ReadFrom(body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if err := c.count(i, buf.Bytes()); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.WriteHeader(http.StatusOK)
		})
	}
	return mux
}

// servePprof serves the profiles the harness fetches on endpoint until stop
// is called.
func servePprof(endpoint string) (stop func(), err error) {
	lis, err := net.Listen("tcp", endpoint)
	if err != nil {
		return nil, fmt.Errorf("pprof endpoint: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
		seconds, err := strconv.Atoi(r.URL.Query().Get("seconds"))
		if err != nil || seconds <= 0 {
			seconds = 30
		}
		if err := pprof.StartCPUProfile(w); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		select {
		case <-time.After(time.Duration(seconds) * time.Second):
		case <-r.Context().Done():
		}
		pprof.StopCPUProfile()
	})
	mux.HandleFunc("/debug/pprof/heap", func(w http.ResponseWriter, _ *http.Request) {
		_ = pprof.Lookup("heap").WriteTo(w, 0)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	return func() {
		srv.Close()
		<-done
	}, nil
}
