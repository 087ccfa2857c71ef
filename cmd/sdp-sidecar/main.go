// SPDX-License-Identifier: Apache-2.0

// Command sdp-sidecar is the reference sidecar of otelcol-sdp: it receives
// SDP ResourceFrames over unix sockets or TCP and counts them, writes their
// OTLP payloads to files or forwards them to an OTLP/gRPC server. See
// README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"syscall"

	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/internal/sidecar"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	cfg, err := sidecar.ParseFlags(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdp-sidecar:", err)
		return 2
	}
	logger, err := zap.NewProduction()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdp-sidecar:", err)
		return 1
	}
	defer logger.Sync()
	cfg.Logger = logger
	if cfg.CPUProfile != "" {
		stop, err := startCPUProfile(cfg.CPUProfile)
		if err != nil {
			logger.Error("Cannot start the CPU profile", zap.Error(err))
			return 1
		}
		defer func() {
			if err := stop(); err != nil {
				logger.Error("Cannot write the CPU profile", zap.String("path", cfg.CPUProfile), zap.Error(err))
			}
		}()
	}
	cfg.Out = os.Stdout
	reportNow := make(chan os.Signal, 1)
	signal.Notify(reportNow, syscall.SIGUSR1)
	defer signal.Stop(reportNow)
	cfg.ReportNow = reportNow
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(cfg.HeapLimit())
	}
	logger.Info("Memory bound", zap.Int64("heap_limit_bytes", cfg.HeapLimit()), zap.Int64("memory_bound_bytes", cfg.MemoryBound()))

	s, err := sidecar.New(cfg)
	if err != nil {
		logger.Error("Cannot start", zap.Error(err))
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := s.Run(ctx); err != nil {
		logger.Error("Stopped with an error", zap.Error(err))
		return 1
	}
	return 0
}

// startCPUProfile profiles the process's CPU into path until the returned
// stop is called, which writes the rest of the profile and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
