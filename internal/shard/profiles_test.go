// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"slices"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/internal/profilestest"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// profilesShape is a request of six resources sharing one dictionary.
var profilesShape = profilestest.Shape{
	Resources: 6, Scopes: 2, Profiles: 2, Samples: 40,
	Functions: 60, Locations: 120, Stacks: 80, Depth: 16,
}

// checkProfileFrames decodes every frame of f as pprofile does and checks
// that, resource by resource, the frames hold exactly the resource's
// samples of want, resolved through their own dictionaries, and are
// marked signal 4.
func checkProfileFrames(t *testing.T, f *Frames, req []byte) {
	t.Helper()
	// Read back, as marshalling moved attribute strings to the dictionary.
	want, err := profilestest.Unmarshal(req)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for shard, frames := range f.ByShard {
		for _, fr := range frames {
			msg, n, err := sdp.Decode(fr.Bytes)
			if err != nil || n != len(fr.Bytes) {
				t.Fatalf("shard %d: decoding frame: n=%d of %d, %v", shard, n, len(fr.Bytes), err)
			}
			rf := msg.(*sdp.ResourceFrame)
			pd, err := profilestest.Unmarshal(rf.OTLP)
			if err != nil {
				t.Fatalf("shard %d: the frame's request does not unmarshal in pprofile: %v", shard, err)
			}
			if rf.Signal != uint8(otlpwire.SignalProfiles) || int(rf.Shard) != shard ||
				int(rf.ItemCount) != pd.SampleCount() || fr.Items != pd.SampleCount() || pd.ResourceProfiles().Len() != 1 {
				t.Fatalf("shard %d: frame of signal %d says shard %d, %d samples (Frame.Items %d); its request holds %d resources, %d samples",
					shard, rf.Signal, rf.Shard, rf.ItemCount, fr.Items, pd.ResourceProfiles().Len(), pd.SampleCount())
			}
			rp := pd.ResourceProfiles().At(0)
			name, _ := rp.Resource().Attributes().Get("service.name")
			got[name.Str()] = append(got[name.Str()], profilestest.ResolvedSamples(pd.Dictionary(), rp)...)
		}
	}
	if len(got) != want.ResourceProfiles().Len() {
		t.Fatalf("frames hold %d resources, want %d", len(got), want.ResourceProfiles().Len())
	}
	for _, rp := range want.ResourceProfiles().All() {
		name, _ := rp.Resource().Attributes().Get("service.name")
		if w := profilestest.ResolvedSamples(want.Dictionary(), rp); !slices.Equal(got[name.Str()], w) {
			t.Errorf("%s: frames hold %d resolved samples unlike the request's %d", name.Str(), len(got[name.Str()]), len(w))
		}
	}
}

// A profiles request is framed by resource, each frame a request of its
// own that carries the dictionary its samples reference.
func TestRouteProfilesWithTheirDictionary(t *testing.T) {
	pd := profilestest.Generate(1, profilesShape)
	b := profilestest.Marshal(pd)
	for _, alloc := range []bool{false, true} {
		r, err := NewRouter(RouterSettings{Shards: 3, MaxFrameBytes: 1_000_000, HashVersion: otlpwire.HashV2})
		if err != nil {
			t.Fatal(err)
		}
		var f Frames
		if alloc {
			f.Alloc = func(n int) []byte { return make([]byte, n, n+100) }
		}
		if err := r.Route(otlpwire.NewRequest(otlpwire.SignalProfiles, b), &f); err != nil {
			t.Fatal(err)
		}
		if f.Resources != 6 || f.Frames != 6 || f.Items != pd.SampleCount() {
			t.Errorf("alloc %v: %d resources, %d frames, %d items framed, want 6, 6 and %d", alloc, f.Resources, f.Frames, f.Items, pd.SampleCount())
		}
		for _, fs := range f.ByShard {
			for _, fr := range fs {
				if !alloc && cap(fr.Bytes) != len(fr.Bytes) {
					t.Errorf("a frame of %d bytes has capacity %d: it does not own exactly its bytes", len(fr.Bytes), cap(fr.Bytes))
				}
			}
		}
		checkProfileFrames(t, &f, b)
	}
}

// A resource larger than MaxFrameBytes is cut between profiles, every
// chunk with the dictionary; routing by trace id leaves profiles by
// resource.
func TestRouteSplitsLargeProfilesResources(t *testing.T) {
	pd := profilestest.Generate(2, profilesShape)
	b := profilestest.Marshal(pd)
	limit := oneProfileLimit(t, b)
	r, err := NewRouter(RouterSettings{Shards: 2, MaxFrameBytes: limit, HashVersion: otlpwire.HashV2, ByTraceID: true})
	if err != nil {
		t.Fatal(err)
	}
	var f Frames
	if err := r.Route(otlpwire.NewRequest(otlpwire.SignalProfiles, b), &f); err != nil {
		t.Fatal(err)
	}
	if f.Frames < 12 || len(f.Unroutable) != 0 {
		t.Fatalf("%d frames (%d unroutable) for 6 resources of 4 profiles, room for about one: not cut between profiles", f.Frames, len(f.Unroutable))
	}
	for _, fs := range f.ByShard {
		for _, fr := range fs {
			if len(fr.Bytes) > limit+scratchSlack+sdp.ResourceHeaderSize {
				t.Errorf("a frame of %d bytes exceeds max_frame_bytes %d", len(fr.Bytes), limit)
			}
		}
	}
	checkProfileFrames(t, &f, b)
	// By resource: each service's frames all on one shard.
	owner := map[uint64]int{}
	for shard, fs := range f.ByShard {
		for _, fr := range fs {
			if o, ok := owner[fr.Key]; ok && o != shard {
				t.Errorf("frames of one resource on shards %d and %d", o, shard)
			}
			owner[fr.Key] = shard
		}
	}
}

// With PruneDictionaries each frame carries only what its resource
// references: the same resolved samples as with the whole dictionary, in
// fewer bytes. A resource whose pruned request does not fit is split with
// the whole dictionary.
func TestRoutePrunedProfilesDictionaries(t *testing.T) {
	pd := profilestest.Generate(3, profilesShape)
	b := profilestest.Marshal(pd)
	route := func(prune bool, limit int) *Frames {
		t.Helper()
		r, err := NewRouter(RouterSettings{Shards: 3, MaxFrameBytes: limit, HashVersion: otlpwire.HashV2, PruneDictionaries: prune})
		if err != nil {
			t.Fatal(err)
		}
		f := new(Frames)
		if err := r.Route(otlpwire.NewRequest(otlpwire.SignalProfiles, b), f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	whole, pruned := route(false, 1_000_000), route(true, 1_000_000)
	checkProfileFrames(t, pruned, b)
	if pruned.Frames != 6 || pruned.Items != whole.Items {
		t.Fatalf("pruned: %d frames of %d items, want 6 of %d", pruned.Frames, pruned.Items, whole.Items)
	}
	if pruned.Bytes >= whole.Bytes {
		t.Errorf("pruned frames hold %d bytes, the whole dictionary's %d", pruned.Bytes, whole.Bytes)
	}
	if pruned.Resources != 6 {
		t.Errorf("pruned: %d resources counted, want 6", pruned.Resources)
	}
	// A limit of exactly the largest pruned request still frames every
	// resource whole, pruned.
	largest := 0
	scratch := new(otlpwire.PruneScratch)
	for rd, err := range otlpwire.NewRequest(otlpwire.SignalProfiles, b).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		req, err := otlpwire.AppendRequestPruned(nil, rd, scratch)
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, len(req))
	}
	if exact := route(true, largest); exact.Frames != pruned.Frames || exact.Bytes != pruned.Bytes {
		t.Errorf("limit at the largest pruned request (%d bytes): %d frames of %d bytes, want %d of %d", largest, exact.Frames, exact.Bytes, pruned.Frames, pruned.Bytes)
	}
	for _, fs := range pruned.ByShard {
		for _, fr := range fs {
			if cap(fr.Bytes) != len(fr.Bytes) {
				t.Errorf("a pruned frame of %d bytes has capacity %d", len(fr.Bytes), cap(fr.Bytes))
			}
		}
	}
	// Too small for any pruned request: every resource is cut, with the
	// whole dictionary in each chunk, as without pruning.
	limit := oneProfileLimit(t, b)
	cut, cutWhole := route(true, limit), route(false, limit)
	checkProfileFrames(t, cut, b)
	if cut.Frames != cutWhole.Frames || cut.Bytes != cutWhole.Bytes {
		t.Errorf("cut with pruning on: %d frames of %d bytes, without: %d of %d", cut.Frames, cut.Bytes, cutWhole.Frames, cutWhole.Bytes)
	}
}

// oneProfileLimit is a MaxFrameBytes with room for the dictionary of the
// profiles request b and about one of its 24 profiles.
func oneProfileLimit(t *testing.T, b []byte) int {
	t.Helper()
	for rd, err := range otlpwire.NewRequest(otlpwire.SignalProfiles, b).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		dict := otlpwire.RequestSize(rd) - len(rd.Bytes())
		return dict + (len(b)-dict)/20
	}
	t.Fatal("no resource")
	return 0
}
