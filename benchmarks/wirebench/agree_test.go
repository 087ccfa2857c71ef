// SPDX-License-Identifier: Apache-2.0

package wirebench

import (
	"bytes"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

var testCache Cache

// testShapes are the family shapes plus the extremes of the sweeps.
var testShapes = append(append([]Shape{}, FamilyShapes...),
	Shape{Resources: 1, Scopes: 100, Items: 3, Attrs: 5},
	Shape{Resources: 3, Scopes: 2, Items: 7, Attrs: 2},
)

func forEachPayload(t *testing.T, fn func(t *testing.T, p Payload)) {
	for _, sig := range Signals {
		for _, enc := range Encodings {
			for _, sh := range testShapes {
				p := testCache.Get(sig, sh, enc)
				t.Run(p.Name(), func(t *testing.T) { fn(t, p) })
			}
		}
	}
}

// The hand walks answer what otlpwire and pdata answer, on every payload.
func TestHandWalksAgree(t *testing.T) {
	forEachPayload(t, func(t *testing.T, p Payload) {
		want := p.Shape.ItemCount()
		if got, err := otlpwire.NewRequest(p.Signal, p.Bytes).ItemCount(); err != nil || got != want {
			t.Fatalf("otlpwire ItemCount = %d, %v; want %d", got, err, want)
		}
		if got, err := WalkCount(p.Signal, p.Bytes); err != nil || got != want {
			t.Fatalf("WalkCount = %d, %v; want %d", got, err, want)
		}
		if got, err := PdataCount(p.Signal, p.Bytes); err != nil || got != want {
			t.Fatalf("PdataCount = %d, %v; want %d", got, err, want)
		}

		wn, wsize, err := WireResources(p.Signal, p.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		fn, fsize, err := HandResources(p.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if wn != p.Shape.Resources || fn != wn || fsize != wsize {
			t.Fatalf("resources: otlpwire %d (%d B), hand walk %d (%d B), want %d", wn, wsize, fn, fsize, p.Shape.Resources)
		}

		wt, wf, err := WireLookup(p.Signal, p.Bytes, LookupKey)
		if err != nil {
			t.Fatal(err)
		}
		ft, ff, err := WalkLookup(p.Bytes, LookupKey)
		if err != nil {
			t.Fatal(err)
		}
		if wf != p.Shape.Resources || ff != wf || ft != wt || wt == 0 {
			t.Fatalf("lookup %q: otlpwire %d values (%d B), hand walk %d (%d B)", LookupKey, wf, wt, ff, ft)
		}
		if _, ff, _ := WalkLookup(p.Bytes, "absent.key"); ff != 0 {
			t.Fatalf("hand walk found an absent key %d times", ff)
		}

		// Split and cut keep every item and every resource.
		total, _, err := WireSplit(p.Signal, p.Bytes, nil)
		if err != nil || total < len(p.Bytes) {
			t.Fatalf("WireSplit = %d B, %v; request is %d B", total, err, len(p.Bytes))
		}
		chunks, items, _, err := WireCut(p.Signal, p.Bytes, 16<<10, nil)
		if err != nil || items != want || chunks < p.Shape.Resources {
			t.Fatalf("WireCut = %d chunks, %d items, %v; want %d items", chunks, items, err, want)
		}
	})
}

// The values each hand walk finds are the values otlpwire finds, resource by
// resource.
func TestLookupValuesAgree(t *testing.T) {
	p := testCache.Get(otlpwire.SignalLogs, Shape{Resources: 4, Scopes: 1, Items: 2, Attrs: 10}, EncodingSDK)
	i := 0
	for rd, err := range otlpwire.NewRequest(p.Signal, p.Bytes).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		res, err := rd.Resource()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := ResourceOf(rd.Bytes())
		if err != nil || len(raw) == 0 {
			t.Fatalf("ResourceOf = %x, %v", raw, err)
		}
		for _, key := range []string{"service.name", LookupKey, "attr.1", "attr.5"} {
			v, ok, err := res.Attribute(key)
			if err != nil || !ok {
				t.Fatalf("otlpwire %q: %v %v", key, ok, err)
			}
			fv, fok, err := LookupString(raw, key)
			if err != nil || !fok || string(fv) != v.Str() {
				t.Fatalf("hand walk %q = %q %v %v; otlpwire %q", key, fv, fok, err, v.Str())
			}
		}
		i++
	}
	if i != 4 {
		t.Fatalf("%d resources", i)
	}
}

// The SDK encoding is the same content as pdata's, in a different byte order.
func TestEncodingsSameContent(t *testing.T) {
	for _, sig := range Signals {
		sh := Shape{Resources: 2, Scopes: 2, Items: 12, Attrs: 6}
		pp := testCache.Get(sig, sh, EncodingPdata)
		sp := testCache.Get(sig, sh, EncodingSDK)
		if bytes.Equal(pp.Bytes, sp.Bytes) {
			t.Errorf("%v: the two encodings are byte-identical; the SDK family would measure nothing new", sig)
		}
		var again []byte
		var err error
		switch sig {
		case otlpwire.SignalTraces:
			td, uerr := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(sp.Bytes)
			if uerr != nil {
				t.Fatal(uerr)
			}
			again, err = (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		case otlpwire.SignalMetrics:
			md, uerr := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(sp.Bytes)
			if uerr != nil {
				t.Fatal(uerr)
			}
			again, err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
		case otlpwire.SignalLogs:
			ld, uerr := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(sp.Bytes)
			if uerr != nil {
				t.Fatal(uerr)
			}
			again, err = (&plog.ProtoMarshaler{}).MarshalLogs(ld)
		}
		if err != nil || !bytes.Equal(again, pp.Bytes) {
			t.Errorf("%v: sdk bytes decoded by pdata and marshalled again differ from pdata's bytes (%v)", sig, err)
		}
	}
}

// The hashes compared are over the same resources: otlpwire sees as many
// resources as pdata decodes, and equal attribute sets hash equal on both.
func TestHashInputsAgree(t *testing.T) {
	for _, sig := range Signals {
		pp := testCache.Get(sig, FamilyShapes[1], EncodingPdata)
		sp := testCache.Get(sig, FamilyShapes[1], EncodingSDK)
		maps, err := PdataResourceAttrs(sig, pp.Bytes)
		if err != nil || len(maps) != FamilyShapes[1].Resources || maps[0].Len() != 10 {
			t.Fatalf("%v: %d maps, %v", sig, len(maps), err)
		}
		for _, ver := range []otlpwire.HashVersion{otlpwire.HashV1, otlpwire.HashV2} {
			hp, err := WireHash(sig, pp.Bytes, ver)
			if err != nil {
				t.Fatal(err)
			}
			hs, err := WireHash(sig, sp.Bytes, ver)
			if err != nil || hs != hp {
				t.Fatalf("%v: otlpwire hash v%d differs between encodings: %x %x %v", sig, ver, hp, hs, err)
			}
		}
		if PdataMapHash(maps) == 0 {
			t.Fatalf("%v: zero pdata hash", sig)
		}
	}
}

// The hand walks reject what they cannot walk instead of panicking or reading
// out of bounds: every truncation of a request is an error or a smaller
// answer.
func TestHandWalksOnTruncatedInput(t *testing.T) {
	p := testCache.Get(otlpwire.SignalMetrics, Shape{Resources: 2, Scopes: 1, Items: 3, Attrs: 3}, EncodingPdata)
	errs := 0
	for n := range len(p.Bytes) {
		b := p.Bytes[:n]
		_, err1 := WalkCount(p.Signal, b)
		_, _, err2 := HandResources(b)
		_, _, err3 := WalkLookup(b, LookupKey)
		if err1 != nil && err2 != nil && err3 != nil {
			errs++
		}
	}
	if errs == 0 {
		t.Fatal("no truncation was reported as malformed")
	}
}
