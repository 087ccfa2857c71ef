// SPDX-License-Identifier: Apache-2.0

package eject

import (
	"slices"
	"testing"
	"time"
)

func TestBudget(t *testing.T) {
	for _, c := range []struct{ pct, n, want int }{
		{50, 4, 2}, {50, 5, 2}, {50, 2, 1}, {50, 1, 0}, {50, 0, 0},
		{10, 4, 0}, {10, 10, 1}, {25, 4, 1}, {100, 4, 3}, {100, 1, 0}, {0, 8, 0},
	} {
		if got := (Policy{MaxEjectedPercent: c.pct}).Budget(c.n); got != c.want {
			t.Errorf("Budget(%d) at %d%% = %d, want %d", c.n, c.pct, got, c.want)
		}
	}
}

func TestChoose(t *testing.T) {
	s := time.Second
	p := Policy{StallTimeout: 5 * s, MaxEjectedPercent: 50}
	for _, c := range []struct {
		name       string
		unanswered []time.Duration
		ejected    []bool
		want       []int
	}{
		{"none stalled", []time.Duration{0, s, 4 * s, 0}, make([]bool, 4), nil},
		{"at the timeout", []time.Duration{0, 5 * s, 0, 0}, make([]bool, 4), []int{1}},
		{"most silent first, within budget", []time.Duration{6 * s, 9 * s, 7 * s, 0}, make([]bool, 4), []int{1, 2}},
		{"ties by index", []time.Duration{6 * s, 6 * s, 6 * s, 0}, make([]bool, 4), []int{0, 1}},
		{"budget used by those out", []time.Duration{6 * s, 0, 9 * s, 0}, []bool{false, true, false, false}, []int{2}},
		{"budget full", []time.Duration{6 * s, 0, 0, 9 * s}, []bool{false, true, true, false}, nil},
		{"ejected members are not chosen again", []time.Duration{0, 9 * s, 0, 0}, []bool{false, true, false, false}, nil},
		{"the last member stays", []time.Duration{9 * s}, []bool{false}, nil},
		{"a zero timeout ejects nothing idle", []time.Duration{0, 0}, make([]bool, 2), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := p.Choose(c.unanswered, c.ejected); !slices.Equal(got, c.want) {
				t.Errorf("Choose = %v, want %v", got, c.want)
			}
		})
	}
	if got := (Policy{MaxEjectedPercent: 50}).Choose([]time.Duration{0, 0}, make([]bool, 2)); got != nil {
		t.Errorf("zero StallTimeout ejected idle members %v", got)
	}
}
