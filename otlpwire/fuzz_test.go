// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"bytes"
	"errors"
	"testing"
)

func FuzzTraces(f *testing.F)  { fuzzSignal(f, SignalTraces) }
func FuzzMetrics(f *testing.F) { fuzzSignal(f, SignalMetrics) }
func FuzzLogs(f *testing.F)    { fuzzSignal(f, SignalLogs) }

// fuzzSignal checks, on arbitrary bytes, what needs the package's internals:
//   - the attribute reads of every resource validate the same bytes
//     (iteration, lookup, Hash and HashKeys each fail exactly when the others
//     do, with errors matching ErrMalformed), and for a valid resource
//     HashWith equals the hash recomputed attribute by attribute, in both
//     versions;
//   - SplitResource cuts every resource whose items count exactly as the
//     previous (quadratic) implementation did.
//
// The comparisons against pdata live in the root module's internal/wirediff,
// whose fuzz targets have the same names and the same seed corpus
// (testdata/fuzz/Fuzz<Signal>).
func fuzzSignal(f *testing.F, sig Signal) {
	f.Fuzz(func(t *testing.T, b []byte) {
		for rd, err := range NewRequest(sig, b).Resources() {
			if err != nil {
				return
			}
			if _, err := rd.ItemCount(); err == nil {
				fuzzSplitAsPreviously(t, rd)
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
			_, _, gerr := res.Attribute("service.name")
			_, _, kerr := res.HashKeys([]string{"service.name", "k"})
			if (iterErr == nil) != (herr == nil) || (herr == nil) != (gerr == nil) || (gerr == nil) != (kerr == nil) {
				t.Fatalf("validation differs: Attributes %v, Hash %v, Attribute %v, HashKeys %v", iterErr, herr, gerr, kerr)
			}
			if iterErr != nil {
				if !errors.Is(iterErr, ErrMalformed) {
					t.Fatalf("attribute error does not match ErrMalformed: %v", iterErr)
				}
				continue
			}
			checkHashesAgainstIteration(t, res)
		}
	})
}

// fuzzSplitAsPreviously checks that the chunks of rd equal those of the
// previous implementation, errors included.
func fuzzSplitAsPreviously(t *testing.T, rd ResourceData) {
	t.Helper()
	got, gerr := collectChunks(SplitResource(rd, 200, nil))
	want, werr := collectChunks(refSplitResource(rd, 200, nil))
	if gerr != werr || len(got) != len(want) {
		t.Fatalf("split: %d chunks (%v), previously %d (%v)", len(got), gerr, len(want), werr)
	}
	for i := range got {
		if !bytes.Equal(got[i].Request, want[i].Request) || got[i].ItemCount != want[i].ItemCount {
			t.Fatalf("chunk %d differs from the previous implementation", i)
		}
	}
}
