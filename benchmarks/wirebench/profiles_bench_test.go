// SPDX-License-Identifier: Apache-2.0

package wirebench

import (
	"fmt"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// profileOps are the implementations of the profiles operations: counting
// samples (otlpwire, pprofile's unmarshal and SampleCount), and building one
// request per resource (otlpwire with the whole dictionary, with it pruned,
// and pprofile: unmarshal, copy the dictionary and the resource, marshal).
func profileOps(op string, p []byte) []struct {
	impl string
	fn   func() error
} {
	type impl = struct {
		impl string
		fn   func() error
	}
	switch op {
	case "count":
		return []impl{
			{"otlpwire", func() error {
				n, err := otlpwire.NewRequest(otlpwire.SignalProfiles, p).ItemCount()
				sink += n
				return err
			}},
			{"pdata", func() error { n, err := PdataProfilesCount(p); sink += n; return err }},
		}
	case "split":
		dst := make([]byte, 0, 2*len(p))
		var scratch otlpwire.PruneScratch
		return []impl{
			{"otlpwire", func() error { n, d, err := WireProfilesSplit(p, dst, false, nil); dst = d; sink += n; return err }},
			{"otlpwire-pruned", func() error { n, d, err := WireProfilesSplit(p, dst, true, &scratch); dst = d; sink += n; return err }},
			{"pdata", func() error { n, err := PdataProfilesSplit(p); sink += n; return err }},
		}
	}
	panic("unknown op " + op)
}

var profCache = map[ProfShape][]byte{}

func profPayload(sh ProfShape) []byte {
	if p, ok := profCache[sh]; ok {
		return p
	}
	p := GenProfiles(sh)
	profCache[sh] = p
	return p
}

// BenchmarkProfiles counts and splits by resource a CPU profiles request of
// 4 processes, 2,000 samples each, stacks up to 32 deep over a dictionary
// of 800 functions they share. The split rows report the bytes written
// per request byte (out/in): the whole dictionary goes to every resource.
func BenchmarkProfiles(b *testing.B) {
	p := profPayload(ProfScale(4))
	var scratch otlpwire.PruneScratch
	whole, _, err := WireProfilesSplit(p, nil, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	pruned, _, err := WireProfilesSplit(p, nil, true, &scratch)
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]int{"otlpwire": whole, "otlpwire-pruned": pruned, "pdata": whole}
	for _, op := range []string{"count", "split"} {
		for _, o := range profileOps(op, p) {
			b.Run(fmt.Sprintf("op=%s/sig=profiles/impl=%s", op, o.impl), func(b *testing.B) {
				measure(b, len(p), o.fn)
				if op == "split" {
					b.ReportMetric(float64(out[o.impl])/float64(len(p)), "out/in")
				}
			})
		}
	}
}

// BenchmarkSweepProfiles: the same shape at scales 1 to 16 (samples,
// stacks and functions grow together, 0.1 MB to 2 MB): otlpwire's cost per
// byte must stay flat.
func BenchmarkSweepProfiles(b *testing.B) {
	for _, s := range []int{1, 2, 4, 8, 16} {
		p := profPayload(ProfScale(s))
		for _, op := range []string{"count", "split"} {
			for _, o := range profileOps(op, p) {
				b.Run(fmt.Sprintf("op=%s/sig=profiles/scale=%d/impl=%s", op, s, o.impl), func(b *testing.B) {
					measure(b, len(p), o.fn)
				})
			}
		}
	}
}
