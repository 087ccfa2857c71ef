// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzProfiles checks, on arbitrary bytes read as a profiles request:
//   - every error matches ErrMalformed or ErrProfilesVersion (or, for a
//     split, ErrItemTooLarge), and ItemAndResourceCount agrees with
//     ItemCount and Resources;
//   - WholeItemCount and AppendRequest give the chunk SplitResource gives
//     for a resource that fits whole;
//   - a resource that counts is cut (at two limits) into requests that each
//     count what they say, hold the resource's bytes envelope and
//     dictionary, and together hold every sample; or the cut stops with
//     ErrProfileTooLarge;
//   - AppendRequestPruned of a resource that counts either fails with a
//     documented error or builds a request that counts the same samples and
//     holds the resource's bytes verbatim;
//   - the attribute reads of each resource fail together.
//
// The comparison with pprofile is the root module's internal/wirediff
// FuzzProfiles, on the same seed corpus (testdata/fuzz/FuzzProfiles).
func FuzzProfiles(f *testing.F) {
	var scratch PruneScratch
	f.Fuzz(func(t *testing.T, b []byte) {
		req := NewRequest(SignalProfiles, b)
		checkItemAndResourceCount(t, req)
		if _, err := req.ItemCount(); err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrProfilesVersion) {
			t.Fatalf("ItemCount: %v", err)
		}
		if _, err := req.ProfileCount(); err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrProfilesVersion) {
			t.Fatalf("ProfileCount: %v", err)
		}
		for rd, err := range req.Resources() {
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrProfilesVersion) {
					t.Fatalf("Resources: %v", err)
				}
				return
			}
			fuzzWholeAsSplit(t, rd)
			n, err := rd.ItemCount()
			if err == nil {
				for _, limit := range []int{RequestSize(rd) / 2, RequestSize(rd) - 1} {
					fuzzProfileSplit(t, rd, n, limit)
				}
				pruned, err := AppendRequestPruned(nil, rd, &scratch)
				switch {
				case err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrProfilesVersion):
					t.Fatalf("AppendRequestPruned: %v", err)
				case err == nil:
					if got, err := NewRequest(SignalProfiles, pruned).ItemCount(); err != nil || got != n {
						t.Fatalf("pruned request counts %d, %v; the resource %d", got, err, n)
					}
					if !bytes.Contains(pruned, rd.Bytes()) || len(pruned) > RequestSize(rd) {
						t.Fatalf("pruned request of %d bytes does not hold the resource (whole %d)", len(pruned), RequestSize(rd))
					}
				}
			}
			res, err := rd.Resource()
			if err != nil {
				continue
			}
			var iterErr error
			for _, err := range res.Attributes() {
				if err != nil {
					iterErr = err
					break
				}
			}
			_, herr := res.Hash()
			_, _, kerr := res.HashKeys([]string{"service.name", "k"})
			if (iterErr == nil) != (herr == nil) || (herr == nil) != (kerr == nil) {
				t.Fatalf("validation differs: Attributes %v, Hash %v, HashKeys %v", iterErr, herr, kerr)
			}
			if iterErr != nil && !errors.Is(iterErr, ErrMalformed) {
				t.Fatalf("attribute error does not match ErrMalformed: %v", iterErr)
			}
		}
	})
}

// fuzzProfileSplit cuts rd, whose samples count n, at limit.
func fuzzProfileSplit(t *testing.T, rd ResourceData, n, limit int) {
	t.Helper()
	total := 0
	for c, err := range SplitResource(rd, limit, nil) {
		if err != nil {
			if !errors.Is(err, ErrProfileTooLarge) || !errors.Is(err, ErrItemTooLarge) {
				t.Fatalf("limit %d: %v", limit, err)
			}
			return
		}
		if len(c.Request) > limit {
			t.Fatalf("limit %d: chunk of %d bytes", limit, len(c.Request))
		}
		got, resources, err := NewRequest(SignalProfiles, c.Request).ItemAndResourceCount()
		if err != nil || resources != 1 || got != c.ItemCount {
			t.Fatalf("limit %d: chunk counts %d in %d resources (%v), says %d", limit, got, resources, err, c.ItemCount)
		}
		if len(rd.dict) > 0 && !rd.span && !bytes.Contains(c.Request, rd.dict) {
			t.Fatalf("limit %d: chunk without the dictionary", limit)
		}
		total += c.ItemCount
	}
	if total != n {
		t.Fatalf("limit %d: chunks hold %d samples, the resource %d", limit, total, n)
	}
}
