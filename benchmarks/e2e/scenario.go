// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Destinations a scenario delivers the load to.
const (
	DestSink     = "sink"     // the harness's OTLP sink, behind the Collector's exporter
	DestSidecars = "sidecars" // the sdp-sidecar processes, in count mode
	DestFloor    = "floor"    // the floor server itself (configs/floor.yaml)
)

// destinations lists every destination, in the order counts are reported.
var destinations = []string{DestSink, DestSidecars, DestFloor}

// Kinds of sidecar process a scenario starts (bench-sidecar-kind).
const (
	// SidecarSDP is sdp-sidecar in count mode on a unix socket, the
	// consumer of otelcol-sdp's sdpshard; the default.
	SidecarSDP = "sdp-sidecar"
	// SidecarFloor is the floor server (cmd/otlpfloor) on loopback TCP: an
	// OTLP/gRPC endpoint that counts items and answers OK, for a Collector
	// whose exporter speaks OTLP to each member (the loadbalancing
	// exporter). BENCH_SHARDi_ENDPOINT is then HOST:PORT, no scheme.
	SidecarFloor = "floor"
)

// Scenario is one system under test: a Collector configuration file in
// configs/, run with one binary, with a number of sidecars. Everything the
// harness needs to know about it is in the comment header of the file:
//
//	# bench-binary: otelcol-sdp      (a key of the harness's binaries: plain, otelcol-sdp, anchor or floor)
//	# bench-sidecars: 2              (sidecar processes to start; 0 when absent)
//	# bench-sidecar-kind: floor      (what they run: sdp-sidecar, the default, or floor)
//	# bench-expect: sink,sidecars    (where every item must arrive exactly once)
//	# bench-baseline: true           (the scenario the others are compared with)
//	# bench-signals: traces,logs     (the signals it has pipelines for; every signal when absent)
//
// The header ends at the first line that is not a comment.
type Scenario struct {
	Name     string // the file name without .yaml
	Path     string
	Binary   string
	Sidecars int
	// SidecarKind is SidecarSDP or SidecarFloor.
	SidecarKind string
	Expect      []string
	Baseline    bool
	// Signals are the signals the configuration has pipelines for; nil
	// means every one of Signals.
	Signals []string
}

// Expects reports whether every item must arrive at dest. A destination that
// is not expected must receive nothing.
func (s Scenario) Expects(dest string) bool { return slices.Contains(s.Expect, dest) }

// Carries reports whether the scenario's configuration has a pipeline for
// signal: the harness runs no case of a signal a scenario does not carry.
func (s Scenario) Carries(signal string) bool {
	return s.Signals == nil || slices.Contains(s.Signals, signal)
}

// MembersVariable is the variable that holds every sidecar's endpoint as
// one YAML list (`endpoints: ${env:BENCH_SHARD_ENDPOINTS}`): a
// configuration written with it runs with any number of sidecars, which
// the name NAME@N chooses (Select).
const MembersVariable = "BENCH_SHARD_ENDPOINTS"

// MaxMembers bounds the sidecars of a NAME@N scenario.
const MaxMembers = 64

// WithMembers returns s run with n sidecars, named s.Name@n. Its
// configuration must list its endpoints as ${env:BENCH_SHARD_ENDPOINTS}.
func (s Scenario) WithMembers(n int) (Scenario, error) {
	b, err := os.ReadFile(s.Path)
	if err != nil {
		return Scenario{}, err
	}
	switch {
	case n < 1 || n > MaxMembers:
		return Scenario{}, fmt.Errorf("%s@%d: members must be in [1, %d]", s.Name, n, MaxMembers)
	case s.Sidecars == 0:
		return Scenario{}, fmt.Errorf("%s@%d: %s starts no sidecars", s.Name, n, s.Name)
	case !bytes.Contains(b, []byte("${env:"+MembersVariable+"}")):
		return Scenario{}, fmt.Errorf("%s@%d: %s lists its endpoints one by one; @N needs endpoints: ${env:%s}", s.Name, n, filepath.Base(s.Path), MembersVariable)
	}
	s.Name = fmt.Sprintf("%s@%d", s.Name, n)
	s.Sidecars = n
	return s, nil
}

// Select picks the scenarios names asks for, in the order of all: a name
// is a scenario's, or NAME@N for scenario NAME with N sidecars
// (WithMembers). The baseline and the floor come along whatever names
// say; no names selects all.
func Select(all []Scenario, names []string) ([]Scenario, error) {
	var out []Scenario
	for _, s := range all {
		if len(names) == 0 || s.Baseline || s.Binary == FloorBinary || slices.Contains(names, s.Name) {
			out = append(out, s)
		}
		for _, name := range names {
			base, members, ok := strings.Cut(name, "@")
			if !ok || base != s.Name {
				continue
			}
			n, err := strconv.Atoi(members)
			if err != nil {
				return nil, fmt.Errorf("-scenarios %s: %q is not a number of members", name, members)
			}
			v, err := s.WithMembers(n)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	for _, name := range names {
		base, _, _ := strings.Cut(name, "@")
		if !slices.ContainsFunc(all, func(s Scenario) bool { return s.Name == base }) {
			return nil, fmt.Errorf("-scenarios: no %s.yaml", base)
		}
	}
	return out, nil
}

// LoadScenarios reads every *.yaml file of dir: the baseline first, then the
// others in name order.
func LoadScenarios(dir string) ([]Scenario, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no *.yaml scenario in %s", dir)
	}
	slices.Sort(paths)
	var out []Scenario
	baselines := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		s, err := ParseScenario(p, b)
		if err != nil {
			return nil, err
		}
		if s.Baseline {
			baselines++
		}
		out = append(out, s)
	}
	if baselines > 1 {
		return nil, fmt.Errorf("%s: more than one scenario says bench-baseline: true", dir)
	}
	slices.SortStableFunc(out, func(a, b Scenario) int {
		switch {
		case a.Baseline == b.Baseline:
			return 0
		case a.Baseline:
			return -1
		}
		return 1
	})
	return out, nil
}

// ParseScenario reads the header of the configuration file at path, whose
// content is b.
func ParseScenario(path string, b []byte) (Scenario, error) {
	s := Scenario{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), Path: path, SidecarKind: SidecarSDP}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "#") {
			break
		}
		key, value, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
		if !ok || !strings.HasPrefix(key, "bench-") {
			continue
		}
		value = strings.TrimSpace(value)
		var err error
		switch key {
		case "bench-binary":
			s.Binary = value
		case "bench-sidecars":
			s.Sidecars, err = strconv.Atoi(value)
			if err == nil && (s.Sidecars < 0 || s.Sidecars > 16) {
				err = errors.New("must be in [0, 16]")
			}
		case "bench-sidecar-kind":
			s.SidecarKind = value
			if value != SidecarSDP && value != SidecarFloor {
				err = fmt.Errorf("unknown kind %q (sdp-sidecar or floor)", value)
			}
		case "bench-expect":
			for _, d := range strings.Split(value, ",") {
				d = strings.TrimSpace(d)
				if !slices.Contains(destinations, d) {
					err = fmt.Errorf("unknown destination %q (sink, sidecars or floor)", d)
					break
				}
				s.Expect = append(s.Expect, d)
			}
		case "bench-baseline":
			s.Baseline, err = strconv.ParseBool(value)
		case "bench-signals":
			s.Signals = []string{}
			for _, sig := range strings.Split(value, ",") {
				sig = strings.TrimSpace(sig)
				if !slices.Contains(Signals, sig) {
					err = fmt.Errorf("unknown signal %q (%s)", sig, strings.Join(Signals, ", "))
					break
				}
				s.Signals = append(s.Signals, sig)
			}
		default:
			err = errors.New("unknown key")
		}
		if err != nil {
			return Scenario{}, fmt.Errorf("%s: %s: %w", path, key, err)
		}
	}
	if err := sc.Err(); err != nil {
		return Scenario{}, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case s.Binary == "":
		return Scenario{}, fmt.Errorf("%s: bench-binary: missing", path)
	case len(s.Expect) == 0:
		return Scenario{}, fmt.Errorf("%s: bench-expect: missing", path)
	case s.Expects(DestSidecars) && s.Sidecars == 0:
		return Scenario{}, fmt.Errorf("%s: bench-expect names sidecars but bench-sidecars is 0", path)
	}
	return s, nil
}
