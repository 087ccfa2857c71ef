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
//     previous (quadratic) implementation did;
//   - WholeItemCount and AppendRequest give, for every resource, valid or
//     not, the chunk or the error SplitResource gives when it fits whole.
//   - PartitionByTraceID of a resource whose items count gives parts that
//     each count what they say and together hold every item, or an error
//     matching ErrMalformed (a bad trace id) or ErrWrongSignal (metrics);
//   - ItemAndResourceCount gives the items and error of ItemCount and, on
//     a valid request, the number of resources Resources yields.
//
// The comparisons against pdata live in the root module's internal/wirediff,
// whose fuzz targets have the same names and the same seed corpus
// (testdata/fuzz/Fuzz<Signal>).
func fuzzSignal(f *testing.F, sig Signal) {
	f.Fuzz(func(t *testing.T, b []byte) {
		checkItemAndResourceCount(t, NewRequest(sig, b))
		for rd, err := range NewRequest(sig, b).Resources() {
			if err != nil {
				return
			}
			fuzzWholeAsSplit(t, rd)
			if _, err := rd.ItemCount(); err == nil {
				fuzzSplitAsPreviously(t, rd)
				fuzzPartition(t, rd)
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

// fuzzWholeAsSplit checks that WholeItemCount with AppendRequest is
// SplitResource for a resource under a limit it fits, errors included.
func fuzzWholeAsSplit(t *testing.T, rd ResourceData) {
	t.Helper()
	want, werr := collectChunks(SplitResource(rd, RequestSize(rd), nil))
	items, err := WholeItemCount(rd)
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("WholeItemCount: error %v, SplitResource %v", err, werr)
	}
	if err != nil {
		return
	}
	if len(want) != 1 || want[0].ItemCount != items || !bytes.Equal(want[0].Request, AppendRequest(nil, rd)) {
		t.Fatalf("WholeItemCount: %d items, SplitResource %d chunks %+v", items, len(want), want)
	}
}

// A resource whose first scope is malformed and whose top level is
// truncated after it: SplitResource reports the top level, which
// ItemCount, walking scope by scope, reaches only after the scope.
// WholeItemCount must report what SplitResource reports.
func TestWholeItemCountFailsAsSplitResource(t *testing.T) {
	b := []byte{0x12, 0x02, 0xff, 0xff, 0x1a, 0x05}
	for _, sig := range []Signal{SignalTraces, SignalMetrics, SignalLogs} {
		rd := NewResourceData(sig, b)
		_, werr := collectChunks(SplitResource(rd, RequestSize(rd), nil))
		_, cerr := rd.ItemCount()
		_, err := WholeItemCount(rd)
		if err == nil || werr == nil || err.Error() != werr.Error() || !errors.Is(err, ErrMalformed) {
			t.Fatalf("%v: WholeItemCount %v, SplitResource %v", sig, err, werr)
		}
		if cerr == nil || cerr.Error() == werr.Error() {
			t.Fatalf("%v: ItemCount %v: the case does not tell the two validations apart", sig, cerr)
		}
		fuzzWholeAsSplit(t, rd)
	}
}

// fuzzPartition checks PartitionByTraceID on a resource whose items count.
func fuzzPartition(t *testing.T, rd ResourceData) {
	t.Helper()
	want, _ := rd.ItemCount()
	var scratch PartitionScratch
	total, parts := 0, 0
	for p, err := range PartitionByTraceID(rd, func(id [16]byte) int { return int(id[3]) % 4 }, 9, &scratch) {
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !(rd.Signal() == SignalMetrics && errors.Is(err, ErrWrongSignal)) {
				t.Fatalf("partition: %v", err)
			}
			if parts > 0 {
				t.Fatalf("error %v after %d parts", err, parts)
			}
			return
		}
		parts++
		n, err := NewRequest(rd.Signal(), p.Request).ItemCount()
		if err != nil || n != p.ItemCount {
			t.Fatalf("part of owner %d holds %d items (%v), ItemCount %d", p.Owner, n, err, p.ItemCount)
		}
		total += p.ItemCount
	}
	if total != want {
		t.Fatalf("parts hold %d items, the resource %d", total, want)
	}
	if rd.Signal() != SignalMetrics {
		return
	}
	total = 0
	for p, err := range PartitionByMetricName(rd, func(name []byte) int { return len(name) % 4 }, &scratch) {
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("partition by metric name: %v", err)
			}
			return
		}
		n, err := NewRequest(rd.Signal(), p.Request).ItemCount()
		if err != nil || n != p.ItemCount {
			t.Fatalf("part of owner %d holds %d points (%v), ItemCount %d", p.Owner, n, err, p.ItemCount)
		}
		total += p.ItemCount
	}
	if total != want {
		t.Fatalf("parts hold %d points, the resource %d", total, want)
	}
	total = 0
	for p, err := range PartitionByStream(rd, func(s uint64) int { return int(s % 5) }, &scratch) {
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("partition by stream: %v", err)
			}
			return
		}
		n, err := NewRequest(rd.Signal(), p.Request).ItemCount()
		if err != nil || n != p.ItemCount {
			t.Fatalf("stream part of owner %d holds %d points (%v), ItemCount %d", p.Owner, n, err, p.ItemCount)
		}
		total += p.ItemCount
	}
	if total != want {
		t.Fatalf("stream parts hold %d points, the resource %d", total, want)
	}
}

// FuzzTraceID checks that readTraceID's loop for well-formed items gives
// exactly what the general reader gives, answer and error, on any bytes
// read as a span, a log record and an exemplar.
func FuzzTraceID(f *testing.F) {
	f.Add([]byte{0x0a, 0x10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0x2a, 0x01, 'x'})
	f.Add([]byte{0x0a, 0x00, 0x0a, 0x10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0x0a, 0x00})
	f.Add([]byte{0x39, 1, 2, 3, 4, 5, 6, 7, 8, 0x4a, 0x10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte{0x0a, 0x03, 1, 2, 3})
	f.Add([]byte{0x40, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, c := range []struct {
			s   *schema
			num int32
		}{{&schemaSpan, 1}, {&schemaLogRecord, 9}, {&schemaExemplar, 5}} {
			got, gotErr := readTraceID(b, c.s, c.num)
			var want [16]byte
			wantErr := readID(b, c.s, c.num, want[:])
			if wantErr != nil {
				want = [16]byte{}
			}
			if got != want || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("%s field %d: %x, %v; the general reader: %x, %v", c.s.name, c.num, got, gotErr, want, wantErr)
			}
		}
	})
}
