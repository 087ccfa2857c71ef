// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/otelcol-sdp/otelcol-sdp/internal/profilestest"
	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// TestProfilesDifferential compares otlpwire with pprofile on every
// generated case, in pdata's encoding and with the dictionary cut in two
// fields around the resources: counts, resources, attributes, hashes, and
// every request built for one resource (whole dictionary, pruned, split).
func TestProfilesDifferential(t *testing.T) {
	cases := profCases()
	for _, name := range sortedKeys(cases) {
		for seed := range uint64(2) {
			b := profilestest.Marshal(genProfiles(seed, cases[name]))
			t.Run(name, func(t *testing.T) { checkProfiles(t, b) })
			t.Run(name+"/two-dictionaries", func(t *testing.T) { checkProfiles(t, splitDictionary(t, b)) })
			if name == "cpu" {
				break // one seed of the large case is enough
			}
		}
	}
}

func checkProfiles(t *testing.T, b []byte) {
	want, err := profilestest.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	req := NewRequest(SignalProfiles, b)
	items, resources, err := req.ItemAndResourceCount()
	if err != nil || items != want.SampleCount() || resources != want.ResourceProfiles().Len() {
		t.Fatalf("ItemAndResourceCount = %d, %d, %v; pprofile %d samples, %d resources", items, resources, err,
			want.SampleCount(), want.ResourceProfiles().Len())
	}
	profiles := 0
	for _, rp := range want.ResourceProfiles().All() {
		profiles += resourceProfileCount(rp)
	}
	if n, err := req.ProfileCount(); err != nil || n != profiles {
		t.Fatalf("ProfileCount = %d, %v; pprofile %d", n, err, profiles)
	}
	var scratch PruneScratch
	i := 0
	for rd, err := range req.Resources() {
		if err != nil {
			t.Fatal(err)
		}
		rp := want.ResourceProfiles().At(i)
		wantSamples := profilestest.ResolvedSamples(want.Dictionary(), rp)
		if n, err := rd.ItemCount(); err != nil || n != len(wantSamples) {
			t.Fatalf("resource %d: ItemCount = %d, %v; pprofile %d", i, n, err, len(wantSamples))
		}
		if n, err := rd.ProfileCount(); err != nil || n != resourceProfileCount(rp) {
			t.Fatalf("resource %d: ProfileCount = %d, %v; pprofile %d", i, n, err, resourceProfileCount(rp))
		}
		res, err := rd.Resource()
		if err != nil {
			t.Fatal(err)
		}
		checkAttributes(t, res, rp.Resource().Attributes())
		checkProfileScopes(t, rd, rp)
		checkHashAsTraces(t, res, rp)

		whole := AppendRequest(nil, rd)
		if len(whole) != RequestSize(rd) {
			t.Fatalf("resource %d: AppendRequest wrote %d bytes, RequestSize %d", i, len(whole), RequestSize(rd))
		}
		checkOneResource(t, "whole", whole, rp, wantSamples)
		pruned, err := AppendRequestPruned(nil, rd, &scratch)
		if err != nil {
			t.Fatal(err)
		}
		checkOneResource(t, "pruned", pruned, rp, wantSamples)
		if len(pruned) > len(whole) {
			t.Fatalf("resource %d: pruned request of %d bytes, whole %d", i, len(pruned), len(whole))
		}
		checkProfileSplit(t, rd, wantSamples)
		i++
	}
	if i != want.ResourceProfiles().Len() {
		t.Fatalf("%d resources, pprofile %d", i, want.ResourceProfiles().Len())
	}
	checkGroup(t, req, want)
}

func resourceProfileCount(rp pprofile.ResourceProfiles) int {
	n := 0
	for _, sp := range rp.ScopeProfiles().All() {
		n += sp.Profiles().Len()
	}
	return n
}

// checkOneResource unmarshals a request built for one resource and compares
// its samples, resolved through its own dictionary, and its resource.
func checkOneResource(t *testing.T, what string, b []byte, rp pprofile.ResourceProfiles, wantSamples []string) {
	t.Helper()
	got, err := profilestest.Unmarshal(b)
	if err != nil {
		t.Fatalf("%s: pprofile refuses the request: %v", what, err)
	}
	if got.ResourceProfiles().Len() != 1 {
		t.Fatalf("%s: %d resources", what, got.ResourceProfiles().Len())
	}
	g := got.ResourceProfiles().At(0)
	if samples := profilestest.ResolvedSamples(got.Dictionary(), g); !slices.Equal(samples, wantSamples) {
		t.Fatalf("%s: %d samples differ from pprofile's %d (first %q, want %q)", what, len(samples),
			len(wantSamples), first(samples), first(wantSamples))
	}
	// fmt prints maps sorted, and NaN as NaN (which DeepEqual finds unequal).
	if fmt.Sprint(g.Resource().Attributes().AsRaw()) != fmt.Sprint(rp.Resource().Attributes().AsRaw()) {
		t.Fatalf("%s: resource attributes %v, want %v", what, g.Resource().Attributes().AsRaw(),
			rp.Resource().Attributes().AsRaw())
	}
	if n, err := NewRequest(SignalProfiles, b).ItemCount(); err != nil || n != len(wantSamples) {
		t.Fatalf("%s: ItemCount of the request = %d, %v", what, n, err)
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// checkProfileScopes compares the scopes (name, version, attributes,
// counts) with pprofile's.
func checkProfileScopes(t *testing.T, rd ResourceData, rp pprofile.ResourceProfiles) {
	t.Helper()
	j := 0
	for sd, err := range rd.Scopes() {
		if err != nil {
			t.Fatal(err)
		}
		sp := rp.ScopeProfiles().At(j)
		sc, err := sd.Scope()
		if err != nil {
			t.Fatal(err)
		}
		name, _ := sc.Name()
		version, _ := sc.Version()
		if string(name) != sp.Scope().Name() || string(version) != sp.Scope().Version() {
			t.Fatalf("scope %d: %q %q, pprofile %q %q", j, name, version, sp.Scope().Name(), sp.Scope().Version())
		}
		checkAttrs(t, sc.Attributes(), sc.Attribute, sp.Scope().Attributes())
		samples := 0
		for _, p := range sp.Profiles().All() {
			samples += p.Samples().Len()
		}
		if n, err := sd.ItemCount(); err != nil || n != samples {
			t.Fatalf("scope %d: ItemCount = %d, %v; pprofile %d", j, n, err, samples)
		}
		if n, err := sd.ProfileCount(); err != nil || n != sp.Profiles().Len() {
			t.Fatalf("scope %d: ProfileCount = %d, %v; pprofile %d", j, n, err, sp.Profiles().Len())
		}
		j++
	}
	if j != rp.ScopeProfiles().Len() {
		t.Fatalf("%d scopes, pprofile %d", j, rp.ScopeProfiles().Len())
	}
}

// checkHashAsTraces checks that the profiles resource hashes as the same
// resource sent as traces does (its attributes travel by reference into
// the dictionary in one, inline in the other).
func checkHashAsTraces(t *testing.T, res Resource, rp pprofile.ResourceProfiles) {
	t.Helper()
	td := ptrace.NewTraces()
	rp.Resource().CopyTo(td.ResourceSpans().AppendEmpty().Resource())
	tb, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	for _, ver := range []HashVersion{HashV1, HashV2} {
		want := resourceHashes(t, SignalTraces, tb, ver)[0]
		if got, err := res.HashWith(ver); err != nil || got != want {
			t.Fatalf("v%d: profiles resource hashes to %x, %v; as traces %x", ver, got, err, want)
		}
	}
}

// checkProfileSplit cuts the resource at several limits: every chunk must
// be a request pprofile accepts, within the limit, counted right, and the
// chunks together hold the resource's samples in order.
func checkProfileSplit(t *testing.T, rd ResourceData, wantSamples []string) {
	t.Helper()
	whole := RequestSize(rd)
	for _, limit := range []int{whole, whole - 1, whole / 2, whole / 5, 64} {
		var got []string
		var chunkErr error
		for c, err := range SplitResource(rd, limit, nil) {
			if err != nil {
				chunkErr = err
				break
			}
			if len(c.Request) > limit {
				t.Fatalf("limit %d: chunk of %d bytes", limit, len(c.Request))
			}
			pd, err := profilestest.Unmarshal(c.Request)
			if err != nil || pd.ResourceProfiles().Len() != 1 {
				t.Fatalf("limit %d: chunk refused by pprofile: %v", limit, err)
			}
			s := profilestest.ResolvedSamples(pd.Dictionary(), pd.ResourceProfiles().At(0))
			if len(s) != c.ItemCount || pd.SampleCount() != c.ItemCount {
				t.Fatalf("limit %d: chunk ItemCount %d, pprofile %d", limit, c.ItemCount, pd.SampleCount())
			}
			got = append(got, s...)
		}
		if chunkErr != nil {
			if !errors.Is(chunkErr, ErrProfileTooLarge) || !errors.Is(chunkErr, ErrItemTooLarge) {
				t.Fatalf("limit %d: %v", limit, chunkErr)
			}
			if limit >= whole {
				t.Fatalf("limit %d (whole %d): %v", limit, whole, chunkErr)
			}
			continue
		}
		if !slices.Equal(got, wantSamples) {
			t.Fatalf("limit %d: chunks hold %d samples, want %d", limit, len(got), len(wantSamples))
		}
	}
}

// checkGroup builds one request of every other resource with AppendResource
// and AppendDictionary once, and checks pprofile reads those resources.
func checkGroup(t *testing.T, req Request, want pprofile.Profiles) {
	t.Helper()
	var b []byte
	var last ResourceData
	var wantSamples []string
	i := 0
	for rd, err := range req.Resources() {
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			b = AppendResource(b, rd)
			last = rd
			wantSamples = append(wantSamples, profilestest.ResolvedSamples(want.Dictionary(), want.ResourceProfiles().At(i))...)
		}
		i++
	}
	if i == 0 {
		return
	}
	b = AppendDictionary(b, last)
	got, err := profilestest.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var samples []string
	for _, rp := range got.ResourceProfiles().All() {
		samples = append(samples, profilestest.ResolvedSamples(got.Dictionary(), rp)...)
	}
	if !slices.Equal(samples, wantSamples) {
		t.Fatalf("group: %d samples, want %d", len(samples), len(wantSamples))
	}
}

// splitDictionary re-encodes a request with its dictionary cut in two
// fields, one before the resources and one after, each holding part of
// every table: protobuf concatenates them, so pprofile reads the same.
func splitDictionary(t *testing.T, b []byte) []byte {
	t.Helper()
	var dict, resources []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if n < 0 || m < 0 {
			t.Fatal("bad request")
		}
		if num == 2 {
			v, _ := protowire.ConsumeBytes(b[n:])
			dict = append(dict, v...)
		} else {
			resources = append(resources, b[:n+m]...)
		}
		b = b[n+m:]
	}
	var d1, d2 []byte
	k := 0
	for len(dict) > 0 {
		num, typ, n := protowire.ConsumeTag(dict)
		m := protowire.ConsumeFieldValue(num, typ, dict[n:])
		if k%2 == 0 || num == 5 && k%3 == 0 {
			// Tables stay in order: entries go to the first field until
			// the first one moves to the second.
			if len(d2) == 0 {
				d1 = append(d1, dict[:n+m]...)
			} else {
				d2 = append(d2, dict[:n+m]...)
			}
		} else {
			d2 = append(d2, dict[:n+m]...)
		}
		dict = dict[n+m:]
		k++
	}
	out := protowire.AppendTag(nil, 2, protowire.BytesType)
	out = protowire.AppendBytes(out, d1)
	out = append(out, resources...)
	out = protowire.AppendTag(out, 2, protowire.BytesType)
	return protowire.AppendBytes(out, d2)
}
