// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	e2ebench "github.com/otelcol-sdp/otelcol-sdp/benchmarks/e2e"
)

func validArgs(signals ...string) benchArgs {
	return benchArgs{rounds: 1, opts: e2ebench.Options{
		Signals: signals, Protocols: []string{"grpc", "http"},
		Shape: e2ebench.Shape{Resources: 1, ItemsPerResource: 1, Kind: e2ebench.PayloadSmall},
		Items: 1, Warmup: 1, Clients: 1,
	}}
}

// -signals takes profiles beside the other signals; an unknown signal is
// refused with a message naming the ones there are.
func TestCheckValuesSignals(t *testing.T) {
	if err := checkValues(validArgs("traces", "metrics", "logs", "profiles")); err != nil {
		t.Errorf("every signal: %v", err)
	}
	if err := checkValues(validArgs("profiles")); err != nil {
		t.Errorf("profiles alone: %v", err)
	}
	err := checkValues(validArgs("traces", "events"))
	if err == nil || !strings.Contains(err.Error(), `"events"`) || !strings.Contains(err.Error(), "traces, metrics, logs, profiles") {
		t.Errorf("unknown signal: %v", err)
	}
}

// The default signals stay traces, metrics and logs, so that a run without
// -signals measures what the figures before profiles measured.
func TestDefaultSignals(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"-h"}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("-h: exit %d", code)
	}
	help := stderr.String()
	i := strings.Index(help, "-signals string")
	if i < 0 {
		t.Fatalf("no -signals in the help:\n%s", help)
	}
	if !strings.Contains(help[i:], `(default "traces,metrics,logs")`) || !strings.Contains(help[i:], "profiles") {
		t.Errorf("-signals help: %s", help[i:min(len(help), i+300)])
	}
}

func TestNotCarried(t *testing.T) {
	all := e2ebench.Scenario{Name: "plain"}
	some := e2ebench.Scenario{Name: "lb", Signals: []string{"traces", "metrics", "logs"}}
	got := notCarried([]e2ebench.Scenario{all, some}, []string{"traces", "profiles"})
	if !slices.Equal(got, []string{"lb/profiles"}) {
		t.Errorf("got %v, want [lb/profiles]", got)
	}
}
