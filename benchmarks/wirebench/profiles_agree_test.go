// SPDX-License-Identifier: Apache-2.0

package wirebench

import (
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// The profiles implementations the benchmarks compare give the same
// answers: the sample count, and per-resource requests of the same total
// size (pdata writes the same dictionary and resource bytes otlpwire
// copies); the pruned requests are smaller.
func TestProfilesAgree(t *testing.T) {
	for _, s := range []int{1, 4} {
		p := GenProfiles(ProfScale(s))
		want, err := PdataProfilesCount(p)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := otlpwire.NewRequest(otlpwire.SignalProfiles, p).ItemCount(); err != nil || n != want {
			t.Fatalf("scale %d: ItemCount = %d, %v; pdata %d", s, n, err, want)
		}
		pdataSize, err := PdataProfilesSplit(p)
		if err != nil {
			t.Fatal(err)
		}
		whole, _, err := WireProfilesSplit(p, nil, false, nil)
		if err != nil || whole != pdataSize {
			t.Fatalf("scale %d: otlpwire writes %d bytes (%v), pdata %d", s, whole, err, pdataSize)
		}
		var scratch otlpwire.PruneScratch
		pruned, _, err := WireProfilesSplit(p, nil, true, &scratch)
		if err != nil || pruned >= whole {
			t.Fatalf("scale %d: pruned requests of %d bytes (%v), whole %d", s, pruned, err, whole)
		}
		t.Logf("scale %d: request %d bytes; per-resource requests %d bytes whole, %d pruned", s, len(p), whole, pruned)
	}
}
