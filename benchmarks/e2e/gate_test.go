// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A Collector is validated and started with the profiles feature gate, and
// a profiles case runs through it end to end; the floor gets no gate (it
// takes none: TestRunCaseCountsCrossings starts it as a scenario). The
// Collector here is the floor server behind a script that records its
// command line and drops the gate, standing in for a plain Collector, whose
// binary the tests do not build.
func TestCollectorsGetProfilesGate(t *testing.T) {
	dir := t.TempDir()
	floor, err := BuildFloor("go", dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	argsFile := filepath.Join(dir, "args")
	script := "#!/bin/sh\n" +
		"echo \"$*\" >> " + argsFile + "\n" +
		"for a do shift; case $a in --feature-gates=*) ;; *) set -- \"$@\" \"$a\";; esac; done\n" +
		"exec " + floor + " \"$@\"\n"
	collector := filepath.Join(dir, "collector")
	if err := os.WriteFile(collector, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(config, []byte("service: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Scenario{Name: "collector", Path: config, Binary: "plain", Expect: []string{DestFloor}}
	o := Options{
		Collectors: map[string]string{"plain": collector}, Signals: []string{"profiles"}, Protocols: []string{"grpc"},
		Shape: Shape{Resources: 2, ItemsPerResource: 5}, Items: 100, Warmup: 2, Clients: 2,
		Settle: 10 * time.Second, WorkDir: dir, Progress: io.Discard,
	}
	available, unavailable := Available(context.Background(), o, []Scenario{s})
	if len(available) != 1 || len(unavailable) != 0 {
		t.Fatalf("available %v, unavailable %v", available, unavailable)
	}
	ms, failures, err := Plan{Options: o, Scenarios: available, Rounds: 1}.Run(context.Background())
	if err != nil || len(failures) != 0 {
		t.Fatalf("run: %v, failures %v", err, failures)
	}
	if len(ms) != 1 || ms[0].Signal != "profiles" || ms[0].Items != 100 {
		t.Fatalf("measurements %+v, want one profiles case of 100 samples", ms)
	}
	b, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{
		"validate --config " + config + " --feature-gates=service.profilesSupport",
		"--config " + config + " --feature-gates=service.profilesSupport",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("command lines\n%q\nwant\n%q", lines, want)
	}

	// A scenario that does not carry profiles runs no profiles case.
	s.Signals = []string{"traces"}
	ms, failures, err = Plan{Options: o, Scenarios: []Scenario{s}, Rounds: 1}.Run(context.Background())
	if err != nil || len(ms) != 0 || len(failures) != 0 {
		t.Errorf("a scenario without profiles: %d measurements, failures %v, %v", len(ms), failures, err)
	}
	if _, err := (Plan{Options: o}).Profile(context.Background(), Case{Scenario: s, Signal: "profiles", Protocol: "grpc"}, 1, filepath.Join(dir, "p.pprof"), "go"); err == nil ||
		!strings.Contains(err.Error(), "no profiles pipeline") {
		t.Errorf("profiling a signal the scenario does not carry: %v", err)
	}
}
