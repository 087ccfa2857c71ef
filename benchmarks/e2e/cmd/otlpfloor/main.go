// SPDX-License-Identifier: Apache-2.0

// Command otlpfloor is the floor of the end-to-end benchmark: a do-nothing
// OTLP server (gRPC and HTTP) that receives each request, counts its items on
// the wire and answers OK. The harness runs it like a Collector, so that it
// takes the same command line:
//
//	otlpfloor --config FILE            serve until SIGTERM or SIGINT
//	otlpfloor validate --config FILE   check that FILE is readable
//
// The configuration file is the scenario file (configs/floor.yaml); the
// server itself reads the harness's variables: BENCH_OTLP_GRPC_ENDPOINT,
// BENCH_OTLP_HTTP_ENDPOINT, BENCH_FLOOR_STATS_FILE and, when the harness
// profiles it, BENCH_FLOOR_PPROF_ENDPOINT.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	e2ebench "github.com/otelcol-sdp/otelcol-sdp/benchmarks/e2e"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "otlpfloor:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	validate := len(args) > 0 && args[0] == "validate"
	if validate {
		args = args[1:]
	}
	fs := flag.NewFlagSet("otlpfloor", flag.ContinueOnError)
	config := fs.String("config", "", "scenario file (only checked for readability)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *config == "" {
		return errors.New("--config is required")
	}
	if _, err := os.ReadFile(*config); err != nil {
		return err
	}
	if validate {
		return nil
	}
	cfg := e2ebench.FloorConfig{
		GRPCEndpoint:  os.Getenv("BENCH_OTLP_GRPC_ENDPOINT"),
		HTTPEndpoint:  os.Getenv("BENCH_OTLP_HTTP_ENDPOINT"),
		StatsFile:     os.Getenv("BENCH_FLOOR_STATS_FILE"),
		PprofEndpoint: os.Getenv("BENCH_FLOOR_PPROF_ENDPOINT"),
	}
	if cfg.GRPCEndpoint == "" || cfg.HTTPEndpoint == "" {
		return errors.New("BENCH_OTLP_GRPC_ENDPOINT and BENCH_OTLP_HTTP_ENDPOINT must be set")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return e2ebench.ServeFloor(ctx, cfg)
}
