// SPDX-License-Identifier: Apache-2.0

//go:build !race

// The race detector makes sync.Pool drop pooled values at random, so the
// allocation pins only hold (and only run) without it.

package wirecountprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCountingAllocatesNothingOnceGroupsAreKnown(t *testing.T) {
	for _, g := range groupings {
		for _, tc := range countingCases(t) {
			t.Run(g.name+"/"+tc.name, func(t *testing.T) {
				cfg := g.cfg
				c, _ := newTestCounter(t, &cfg, tc.signal)
				count := tc.count(t, c)
				require.NoError(t, count()) // admits the groups
				allocs := testing.AllocsPerRun(50, func() {
					if err := count(); err != nil {
						t.Fatal(err)
					}
				})
				assert.Zero(t, allocs)
			})
		}
	}
}

func TestOverflowCountingAllocatesNothingOnceFolded(t *testing.T) {
	cfg := Config{GroupBy: []string{"host.name"}, MaxGroups: 1}
	for _, tc := range countingCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			c, tt := newTestCounter(t, &cfg, tc.signal)
			count := tc.count(t, c)
			require.NoError(t, count())
			require.NotEmpty(t, readSeries(t, tt, overflowGroupsMetric))
			assert.Zero(t, testing.AllocsPerRun(50, func() { _ = count() }))
		})
	}
}
