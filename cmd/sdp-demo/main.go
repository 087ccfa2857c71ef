// SPDX-License-Identifier: Apache-2.0

// Command sdp-demo runs the otelcol-sdp demo (`make demo`): two reference
// sidecars and the Collector with examples/gateway.yaml, traces, metrics and
// logs sent with telemetrygen over gRPC and HTTP, and a report of the items
// sent, counted by the wirecount processor and received per shard.
//
// It exits non-zero when the numbers differ or a process fails; the logs of
// the processes are then kept in the work directory it names. With -report
// FILE it also writes the table to FILE: the README's table is that output,
// and test/e2e compares it with a run of its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/otelcol-sdp/otelcol-sdp/internal/demo"
)

func main() {
	var opts demo.Options
	flag.StringVar(&opts.Binaries.Collector, "collector", "bin/otelcol-sdp", "otelcol-sdp binary")
	flag.StringVar(&opts.Binaries.Sidecar, "sidecar", "bin/sdp-sidecar", "sdp-sidecar binary")
	flag.StringVar(&opts.Binaries.Telemetrygen, "telemetrygen", ".tools/bin/telemetrygen", "telemetrygen binary")
	flag.StringVar(&opts.Config, "config", "examples/gateway.yaml", "Collector configuration")
	flag.IntVar(&opts.Items, "items", 200, "items per telemetrygen run")
	flag.IntVar(&opts.Services, "services", 4, "distinct service.name values per signal and protocol")
	flag.StringVar(&opts.WorkDir, "workdir", "", "directory for logs, sockets and statistics (default: a temporary one, removed on success)")
	reportFile := flag.String("report", "", "also write the report table to this file")
	flag.Parse()
	opts.Progress = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	report, err := demo.Run(ctx, opts)
	if report != nil {
		fmt.Println()
		report.WriteTo(os.Stdout)
		fmt.Printf("\n%d cases in %s\n", len(report.Results), report.Elapsed.Round(100_000_000))
		if *reportFile != "" {
			if werr := writeReport(*reportFile, report); werr != nil {
				err = errors.Join(err, werr)
			}
		}
	}
	if err == nil && report != nil {
		err = report.Err()
		if err != nil {
			err = fmt.Errorf("%w (logs in %s)", err, report.WorkDir)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdp-demo:", err)
		os.Exit(1)
	}
	fmt.Println("sent = counted = received for every signal and protocol")
}

// writeReport writes the report table to path.
func writeReport(path string, report *demo.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if _, err := report.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("report: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
