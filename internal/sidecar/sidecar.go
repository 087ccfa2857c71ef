// SPDX-License-Identifier: Apache-2.0

package sidecar

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// shutdownTimeout bounds how long Run waits for connections to finish
// after its context ends.
const shutdownTimeout = 10 * time.Second

// sink is what a mode does with an accepted frame.
type sink interface {
	consume(f *sdp.ResourceFrame) (sdp.AckStatus, string)
	close() error
}

type countSink struct{}

func (countSink) consume(*sdp.ResourceFrame) (sdp.AckStatus, string) { return sdp.AckAccepted, "" }
func (countSink) close() error                                       { return nil }

// Sidecar serves the SDP transport on its endpoints and hands every frame
// to its mode.
type Sidecar struct {
	cfg       Config
	log       *zap.Logger
	listeners []net.Listener
	sink      sink
	stats     *collector
	server    *transport.Server
	closeOnce sync.Once
	closeErr  error
	// reported is the encoding of the last statistics reported; only Run's
	// goroutine uses it.
	reported []byte

	// unsynced holds, per connection (by its Hello), the frames accepted
	// with -fsync whose Sync has not run yet.
	unsyncedMu sync.Mutex
	unsynced   map[*sdp.Hello][]frameStat
}

// New validates cfg, listens on every endpoint and prepares the mode (the
// output directory, the gRPC client). Call Run, or Close if Run is never
// called.
func New(cfg Config) (*Sidecar, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Sidecar{cfg: cfg, log: cfg.Logger, stats: newCollector(), unsynced: map[*sdp.Hello][]frameStat{}}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	var err error
	switch cfg.Mode {
	case ModeCount:
		s.sink = countSink{}
	case ModeFile:
		s.sink, err = newFileSink(cfg.Dir, fileOptions{maxOpen: cfg.MaxOpenFiles, idleAfter: cfg.FileIdleTimeout, durable: cfg.Fsync})
	case ModeForward:
		s.sink, err = newForwardSink(cfg.ForwardEndpoint, cfg.ForwardTimeout)
	}
	if err != nil {
		return nil, err
	}
	tlsConfig, err := serverTLS(&cfg)
	if err != nil {
		s.Close()
		return nil, err
	}
	for _, endpoint := range cfg.Listen {
		lc := transport.ListenConfig{SocketMode: cfg.SocketMode}
		if network, _, _ := transport.ParseEndpoint(endpoint); network == "tcp" {
			lc.TLS = tlsConfig
		}
		l, err := lc.Listen(endpoint)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.listeners = append(s.listeners, l)
	}
	s.server = &transport.Server{Handler: s, Logger: slog.New(zapslog.NewHandler(s.log.Core())), AckDelay: cfg.AckDelay,
		MaxConns: cfg.MaxConns, HelloTimeout: cfg.HelloTimeout, IdleTimeout: cfg.IdleTimeout,
		FrameTimeout: cfg.FrameTimeout, ReadBudget: cfg.ReadBudget}
	return s, nil
}

// serverTLS loads the TLS configuration of tcp endpoints; nil without
// -tls-cert.
func serverTLS(cfg *Config) (*tls.Config, error) {
	if cfg.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("-tls-cert/-tls-key: %w", err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if cfg.TLSClientCA != "" {
		pem, err := os.ReadFile(cfg.TLSClientCA)
		if err != nil {
			return nil, fmt.Errorf("-tls-client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-tls-client-ca %s: no PEM certificate in it", cfg.TLSClientCA)
		}
		c.ClientCAs = pool
		c.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// Addrs returns the addresses listened on, in the order of Config.Listen.
func (s *Sidecar) Addrs() []net.Addr {
	addrs := make([]net.Addr, len(s.listeners))
	for i, l := range s.listeners {
		addrs[i] = l.Addr()
	}
	return addrs
}

// HandleFrame implements transport.Handler.
func (s *Sidecar) HandleFrame(hello *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string) {
	if isProbe(f) {
		// A gateway asking whether this sidecar answers (sdpshard's
		// ejection): nothing to store or pass on, and nothing to count.
		return sdp.AckAccepted, ""
	}
	status, detail := s.cfg.AckStatus, ""
	if status == sdp.AckAccepted {
		status, detail = s.sink.consume(f)
	} else {
		detail = fmt.Sprintf("sidecar runs with -ack-status %d", status)
	}
	if status != sdp.AckAccepted {
		s.log.Debug("Frame not accepted", zap.String("sender", transport.Truncate(hello.Sender)), zap.Uint32("shard", f.Shard),
			zap.Uint64("sequence", f.Sequence), zap.Stringer("status", status), zap.String("detail", transport.Truncate(detail)))
	}
	if status == sdp.AckAccepted && s.cfg.Fsync {
		// Counted once Sync says whether the Ack stays "accepted".
		s.unsyncedMu.Lock()
		s.unsynced[hello] = append(s.unsynced[hello], statOf(f))
		s.unsyncedMu.Unlock()
	} else {
		s.stats.record(statOf(f), status)
	}
	return status, detail
}

// Sync implements transport.Syncer: with -fsync, mode file syncs the files
// written since the last Sync before the Acks that accept their records go
// out; otherwise it does nothing.
func (s *Sidecar) Sync(hello *sdp.Hello) error {
	fs, ok := s.sink.(*fileSink)
	if !ok || !s.cfg.Fsync {
		return nil
	}
	err := fs.sync()
	s.unsyncedMu.Lock()
	frames := s.unsynced[hello]
	delete(s.unsynced, hello)
	s.unsyncedMu.Unlock()
	status := sdp.AckAccepted
	if err != nil {
		status = sdp.AckRetry
	}
	for _, f := range frames {
		s.stats.record(f, status)
	}
	return err
}

// Stats returns the statistics so far.
func (s *Sidecar) Stats() Stats { return s.snapshot(false) }

func (s *Sidecar) snapshot(final bool) Stats {
	st := s.stats.snapshot(final)
	if s.server != nil {
		st.Connections = s.server.Stats()
	}
	return st
}

// Run serves until ctx ends, then closes the connections, waits for them
// (up to 10 seconds), closes the mode's outputs and writes the final
// statistics. It reports a listener that failed or an output that did not
// close cleanly.
func (s *Sidecar) Run(ctx context.Context) error {
	serveErrs := make(chan error, len(s.listeners))
	for _, l := range s.listeners {
		go func() { serveErrs <- s.server.Serve(l) }()
	}
	for _, l := range s.listeners {
		s.log.Info("Sidecar listening", zap.String("addr", l.Addr().String()), zap.String("mode", s.cfg.Mode))
	}
	var tick <-chan time.Time
	if s.cfg.StatsInterval > 0 {
		t := time.NewTicker(s.cfg.StatsInterval)
		defer t.Stop()
		tick = t.C
	}
	var runErr error
	running := len(s.listeners)
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-serveErrs:
			running--
			runErr = fmt.Errorf("serving: %w", err)
			break loop
		case <-tick:
			s.report(false)
		case <-s.cfg.ReportNow:
			s.report(false)
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := s.server.Shutdown(shutdownCtx); err != nil {
		runErr = errors.Join(runErr, err)
	}
	for ; running > 0; running-- {
		if err := <-serveErrs; !errors.Is(err, transport.ErrServerClosed) {
			runErr = errors.Join(runErr, fmt.Errorf("serving: %w", err))
		}
	}
	if err := s.Close(); err != nil {
		runErr = errors.Join(runErr, err)
	}
	s.report(true)
	return runErr
}

// report prints the statistics and rewrites the stats file, unless they
// are what the last report showed: an idle sidecar, one of a large fleet
// for instance, then costs nothing per interval. The final report is
// always made.
func (s *Sidecar) report(final bool) {
	st := s.snapshot(final)
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		s.log.Error("Cannot encode the statistics", zap.Error(err))
		return
	}
	if !final && bytes.Equal(b, s.reported) {
		return
	}
	s.reported = b
	if s.cfg.Out != nil {
		printStats(s.cfg.Out, st)
	}
	if s.cfg.StatsFile != "" {
		if err := writeStatsFile(s.cfg.StatsFile, b); err != nil {
			s.log.Error("Cannot write the stats file", zap.Error(err))
		}
	}
}

// Close closes the listeners and the mode's outputs; Run calls it. It is
// for a Sidecar whose Run is never called.
func (s *Sidecar) Close() error {
	s.closeOnce.Do(func() {
		for _, l := range s.listeners {
			l.Close()
		}
		if s.sink != nil {
			s.closeErr = s.sink.close()
		}
	})
	return s.closeErr
}

// isProbe reports the probe a gateway sends to learn whether an ejected
// sidecar answers again: a frame with no items and resource_hash 0 whose
// payload is a valid request of its signal holding none. A resource of a
// batch that has no items keeps its own resource_hash, so it is stored and
// passed on as before.
func isProbe(f *sdp.ResourceFrame) bool {
	if f.ItemCount != 0 || f.ResourceHash != 0 {
		return false
	}
	sig := otlpwire.Signal(f.Signal)
	if !sig.Valid() {
		return false
	}
	n, err := otlpwire.NewRequest(sig, f.OTLP).ItemCount()
	return err == nil && n == 0
}
