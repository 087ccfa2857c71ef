// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"errors"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/internal/profilestest"
	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// FuzzProfiles compares otlpwire with pprofile on arbitrary bytes read as a
// profiles request:
//   - input pprofile's receiver path accepts is refused only with an error
//     matching ErrProfilesVersion (a field the pinned layout lacks) or
//     ErrUnsupported; otherwise the sample count is pprofile's;
//   - when both accept, each resource's attributes are pprofile's (keys
//     and values resolved through the dictionary), and the request
//     AppendRequest builds for it, and the one AppendRequestPruned builds,
//     are accepted by pprofile with the resource's samples, resolved alike.
//
// The seed corpus is testdata/fuzz/FuzzProfiles (otlpwire's golden
// profiles vectors).
func FuzzProfiles(f *testing.F) {
	var scratch PruneScratch
	f.Fuzz(func(t *testing.T, b []byte) {
		req := NewRequest(SignalProfiles, b)
		n, err := req.ItemCount()
		pd, perr := profilestest.Unmarshal(b)
		if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrProfilesVersion) {
			t.Fatalf("error matches neither ErrMalformed nor ErrProfilesVersion: %v", err)
		}
		if perr != nil {
			return
		}
		if err != nil {
			if !errors.Is(err, ErrProfilesVersion) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("pprofile accepts (%d samples), otlpwire: %v", pd.SampleCount(), err)
			}
			return
		}
		if n != pd.SampleCount() {
			t.Fatalf("ItemCount %d, pprofile %d", n, pd.SampleCount())
		}
		i := 0
		for rd, err := range req.Resources() {
			if err != nil {
				t.Fatal(err)
			}
			rp := pd.ResourceProfiles().At(i)
			res, err := rd.Resource()
			if err != nil {
				t.Fatal(err)
			}
			if err := firstAttrErr(res); err != nil {
				// Groups and deep nesting: refused by design.
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("pprofile accepts the resource, otlpwire: %v", err)
				}
			} else {
				checkAttributes(t, res, rp.Resource().Attributes())
			}
			want := profilestest.ResolvedSamples(pd.Dictionary(), rp)
			checkOneResource(t, "whole", AppendRequest(nil, rd), rp, want)
			pruned, err := AppendRequestPruned(nil, rd, &scratch)
			if err != nil {
				// Pruning reads the entries samples reference, which
				// pprofile does not validate.
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrProfilesVersion) {
					t.Fatal(err)
				}
			} else {
				checkOneResource(t, "pruned", pruned, rp, want)
			}
			i++
		}
	})
}

func firstAttrErr(res Resource) error {
	for _, err := range res.Attributes() {
		if err != nil {
			return err
		}
	}
	return nil
}
