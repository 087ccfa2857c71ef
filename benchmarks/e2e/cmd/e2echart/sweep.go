// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	e2ebench "github.com/otelcol-sdp/otelcol-sdp/benchmarks/e2e"
)

// Sweep keys: the load dimension a sweep varies.
const (
	keyClients   = "clients"
	keyResources = "resources"
	// keyMembers sweeps the members of a fleet: scenarios NAME@N within
	// one run (fleetSweep), not runs.
	keyMembers = "members"
)

var sweepKeys = []string{keyClients, keyResources}

// A benchRun is one benche2e -json file.
type benchRun struct {
	file string
	res  e2ebench.Results
}

// A sweep is runs that differ only in one load dimension, in order of it.
type sweep struct {
	key  string
	runs []benchRun
}

// x is the run's position on the sweep's axis.
func (s sweep) x(r benchRun) float64 { return xOf(s.key, r.res.Load) }

func xOf(key string, l e2ebench.LoadShape) float64 {
	if key == keyClients {
		return float64(l.Clients)
	}
	return float64(l.Resources)
}

// xLabel names a run's position: the clients, or the request's shape
// (resources x items per resource), which a resources sweep changes as a
// whole.
func xLabel(key string, l e2ebench.LoadShape) string {
	if key == keyClients {
		return fmt.Sprint(l.Clients)
	}
	return fmt.Sprintf("%dx%d", l.Resources, l.ItemsPerResource)
}

// fixed describes the load every run of a key's sweep shares: everything but
// the swept dimension. Runs with equal fixed descriptions belong to one sweep.
// The number of items, warm-up requests and rounds are not part of it: they
// change how precisely a cost is measured, not the cost.
func fixed(key string, l e2ebench.LoadShape) string {
	var parts []string
	if key != keyClients {
		parts = append(parts, fmt.Sprintf("%d clients", l.Clients))
	}
	if key != keyResources {
		parts = append(parts, fmt.Sprintf("%d x %d items per request", l.Resources, l.ItemsPerResource))
	}
	return strings.Join(append(parts, l.Payload+" payload", "compression "+l.Compression), ", ")
}

// findSweeps finds, for each key, the runs that sweep it: runs sharing
// everything but that dimension, at two or more positions. A key with no
// such runs has no sweep; one with two sets of them (say a clients sweep
// at two payloads) is an error, as are two runs at one position.
func findSweeps(runs []benchRun, keys []string) ([]sweep, error) {
	var out []sweep
	for _, key := range keys {
		if !slices.Contains(sweepKeys, key) {
			return nil, fmt.Errorf("unknown sweep key %q (want %s or %s)", key, strings.Join(sweepKeys, ", "), keyMembers)
		}
		groups := map[string][]benchRun{}
		var order []string
		for _, r := range runs {
			f := fixed(key, r.res.Load)
			if _, ok := groups[f]; !ok {
				order = append(order, f)
			}
			groups[f] = append(groups[f], r)
		}
		var found []sweep
		for _, f := range order {
			g := groups[f]
			s := sweep{key: key, runs: slices.Clone(g)}
			slices.SortStableFunc(s.runs, func(a, b benchRun) int { return cmp.Compare(s.x(a), s.x(b)) })
			for i := 1; i < len(s.runs); i++ {
				if s.x(s.runs[i]) == s.x(s.runs[i-1]) {
					return nil, fmt.Errorf("%s and %s are both at %s %s (%s): chart one of them",
						s.runs[i-1].file, s.runs[i].file, key, xLabel(key, s.runs[i].res.Load), f)
				}
			}
			if len(s.runs) > 1 {
				found = append(found, s)
			}
		}
		if len(found) > 1 {
			var descs []string
			for _, s := range found {
				descs = append(descs, fixed(key, s.runs[0].res.Load))
			}
			return nil, fmt.Errorf("the files hold %d %s sweeps (%s): chart each separately", len(found), key, strings.Join(descs, "; "))
		}
		out = append(out, found...)
	}
	return out, nil
}

// A panel is one signal and protocol of a sweep: for each scenario, its
// case in each run (absent where the run has none).
type panel struct {
	signal, protocol string
	scenarios        []string
	// cases[scenario][i] is the scenario's case in the sweep's run i.
	cases map[string][]*e2ebench.CaseResults
}

// panels splits a sweep by signal and protocol, in the report's order, with
// the scenarios in the order the runs list them.
func (s sweep) panels() []panel {
	var out []panel
	for _, signal := range e2ebench.Signals {
		for _, protocol := range e2ebench.Protocols {
			p := panel{signal: signal, protocol: protocol, cases: map[string][]*e2ebench.CaseResults{}}
			for i, r := range s.runs {
				for j := range r.res.Cases {
					c := &r.res.Cases[j]
					if c.Signal != signal || c.Protocol != protocol {
						continue
					}
					if _, ok := p.cases[c.Scenario]; !ok {
						p.scenarios = append(p.scenarios, c.Scenario)
						p.cases[c.Scenario] = make([]*e2ebench.CaseResults, len(s.runs))
					}
					p.cases[c.Scenario][i] = c
				}
			}
			if len(p.scenarios) > 0 {
				out = append(out, p)
			}
		}
	}
	return out
}
