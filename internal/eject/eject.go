// SPDX-License-Identifier: Apache-2.0

// Package eject decides which members of a fleet to take out of the
// assignment because they stopped answering, bounded so that a slowdown of
// the whole fleet stays backpressure instead of turning into a storm of
// ejections (the idea of Envoy's outlier detection and its maximum
// ejection percent).
//
// The package holds the decision only. Whoever owns the members' clients
// measures how long each has gone unanswered, applies the decision (moves
// the member's keys to their next owners, takes back its frames) and
// probes ejected members to take them back in.
package eject

import (
	"cmp"
	"slices"
	"time"
)

// Policy says when a member is ejected and how many may be at once.
type Policy struct {
	// StallTimeout is how long a member may hold frames without answering
	// any before it is ejected.
	StallTimeout time.Duration
	// MaxEjectedPercent bounds the members ejected at once, as a share of
	// the fleet, rounded down. At least one member always stays in.
	MaxEjectedPercent int
}

// Budget returns how many of n members may be ejected at once.
func (p Policy) Budget(n int) int {
	b := n * p.MaxEjectedPercent / 100
	return max(min(b, n-1), 0)
}

// Choose returns the members to eject now, most silent first: those not
// ejected yet whose unanswered time has reached StallTimeout, as many as
// the budget leaves room for next to those already ejected. unanswered[i]
// is how long member i has held frames without an answer (zero when it
// holds none); ejected[i] says it is out already. The two slices have one
// entry per member.
func (p Policy) Choose(unanswered []time.Duration, ejected []bool) []int {
	room := p.Budget(len(unanswered))
	for _, out := range ejected {
		if out {
			room--
		}
	}
	if room <= 0 {
		return nil
	}
	var stalled []int
	for i, d := range unanswered {
		if !ejected[i] && d > 0 && d >= p.StallTimeout {
			stalled = append(stalled, i)
		}
	}
	// Most silent first; ties by index so that every replica that sees
	// the same picks the same.
	slices.SortStableFunc(stalled, func(a, b int) int { return cmp.Compare(unanswered[b], unanswered[a]) })
	if len(stalled) > room {
		stalled = stalled[:room]
	}
	return stalled
}
