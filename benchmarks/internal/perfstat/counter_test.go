// SPDX-License-Identifier: Apache-2.0

package perfstat_test

import (
	"os"
	"strings"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/perfstat"
	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/perfstat/perfstattest"
)

func TestCounterCountsTheWindowItOpens(t *testing.T) {
	k, err := perfstat.Start(perfstattest.Setup(t, perfstattest.Count), os.Getpid(), t.TempDir(), "collector")
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Enable(); err != nil {
		t.Fatal(err)
	}
	if err := k.Disable(); err != nil {
		t.Fatal(err)
	}
	if got, err := k.Stop(); err != nil || got != perfstattest.Crossings {
		t.Fatalf("got %+v, %v; want %+v", got, err, perfstattest.Crossings)
	}
}

func TestCounterReportsWhatPerfSaid(t *testing.T) {
	k, err := perfstat.Start(perfstattest.Setup(t, perfstattest.Fail), os.Getpid(), t.TempDir(), "collector")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Kill()
	err = k.Enable()
	if err == nil || !strings.Contains(err.Error(), "event syntax error") {
		t.Fatalf("enable with a perf that exited: %v", err)
	}
}
