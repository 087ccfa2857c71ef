// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"math/rand/v2"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/otelcol-sdp/otelcol-sdp/internal/profilestest"
)

// profShape sizes a generated profiles request. Every resource draws its
// stacks from one shared dictionary, so resources share functions,
// locations, strings and attributes.
type profShape struct {
	resources, scopes, profiles, samples int
	functions, locations, stacks, depth  int
	attrs                                int // resource attributes (genAttrs)
}

// genProfiles builds a profiles request with profilestest.Generate, whose
// resources and scopes carry the random attributes of the other signals'
// generated requests.
func genProfiles(seed uint64, sh profShape) pprofile.Profiles {
	return profilestest.Generate(seed, profilestest.Shape{
		Resources: sh.resources, Scopes: sh.scopes, Profiles: sh.profiles, Samples: sh.samples,
		Functions: sh.functions, Locations: sh.locations, Stacks: sh.stacks, Depth: sh.depth,
		Resource: func(r *rand.Rand, i int, res pcommon.Resource) { genResource(r, res, i, sh.attrs) },
		Scope:    func(r *rand.Rand, j int, sc pcommon.InstrumentationScope) { genScope(r, sc, j) },
	})
}

// profCases are the generated requests of the differential tests: small
// ones of every shape, empty containers, and a CPU profile of real shape.
func profCases() map[string]profShape {
	return map[string]profShape{
		"one":       {resources: 1, scopes: 1, profiles: 1, samples: 3, functions: 5, locations: 8, stacks: 4, depth: 4, attrs: 2},
		"shared":    {resources: 5, scopes: 2, profiles: 2, samples: 20, functions: 30, locations: 60, stacks: 40, depth: 12, attrs: 4},
		"empty":     {resources: 3, scopes: 1, profiles: 1, samples: 0, functions: 3, locations: 3, stacks: 2, depth: 2, attrs: 1},
		"no-scopes": {resources: 2, scopes: 0, functions: 3, locations: 3, stacks: 2, depth: 2, attrs: 3},
		"cpu": {resources: 8, scopes: 1, profiles: 2, samples: 2500, functions: 2000, locations: 6000,
			stacks: 3000, depth: 64, attrs: 6},
	}
}

// sortedKeys returns the names of profCases in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
