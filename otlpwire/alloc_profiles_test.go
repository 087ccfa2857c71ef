// SPDX-License-Identifier: Apache-2.0

package otlpwire

import "testing"

// TestProfilesZeroAllocations pins the profiles paths the components use:
// counting, iterating resources, building a resource's request (whole, with
// the dictionary pruned into a grown scratch, or cut by SplitResource), and
// reading and hashing the attributes of a resource whose attributes are
// scalars written as string-table references, as pdata writes them. An
// array or kvlist attribute of a profiles resource costs one allocation
// per walk over the attributes (the dictionary its elements resolve
// through).
func TestProfilesZeroAllocations(t *testing.T) {
	var b []byte
	for _, v := range goldenVectors(t) {
		if v.Name == "profiles-shared/pdata" {
			b = v.Request
		}
	}
	req := NewRequest(SignalProfiles, b)
	var rds []ResourceData
	for rd, err := range req.Resources() {
		if err != nil {
			t.Fatal(err)
		}
		rds = append(rds, rd)
	}
	plain, nested := rds[2], rds[0]
	res := must(plain.Resource())
	if v, ok, err := res.Attribute("service.name"); err != nil || !ok || v.Str() != "svc-2" {
		t.Fatalf("service.name = %q, %v, %v", v.Str(), ok, err)
	}
	var scratch PruneScratch
	buf := make([]byte, 0, 2*len(b))
	if _, err := AppendRequestPruned(buf, nested, &scratch); err != nil {
		t.Fatal(err)
	}
	split := make([]byte, 0, 2*len(b))
	limit := RequestSize(nested) - 1
	checks := map[string]func(){
		"Request.ItemCount":            func() { _, _ = req.ItemCount() },
		"Request.ItemAndResourceCount": func() { _, _, _ = req.ItemAndResourceCount() },
		"Request.ProfileCount":         func() { _, _ = req.ProfileCount() },
		"ResourceData.ItemCount":       func() { _, _ = nested.ItemCount() },
		"Resources": func() {
			for rd, err := range req.Resources() {
				if err != nil {
					t.Fatal(err)
				}
				for sd := range rd.Scopes() {
					_, _ = sd.ItemCount()
				}
			}
		},
		"AppendRequest": func() {
			for rd := range req.Resources() {
				_ = AppendRequest(buf[:0], rd)
			}
		},
		"AppendRequestPruned": func() { _, _ = AppendRequestPruned(buf[:0], nested, &scratch) },
		"Attribute":           func() { _, _, _ = res.Attribute("service.name") },
		"Attributes": func() {
			for kv := range res.Attributes() {
				_, _ = kv.Value()
			}
		},
		"Hash":         func() { _, _ = res.Hash() },
		"HashWith(V2)": func() { _, _ = res.HashWith(HashV2) },
		"HashKeys":     func() { _, _, _ = res.HashKeys([]string{"service.name"}) },
	}
	for name, fn := range checks {
		if n := testing.AllocsPerRun(20, fn); n != 0 {
			t.Errorf("profiles %s: %v allocations", name, n)
		}
	}
	// SplitResource costs what it costs for the other signals (its
	// iterator and splitter escape): two allocations a call, none a chunk.
	if n := testing.AllocsPerRun(20, func() {
		for _, err := range SplitResource(nested, limit, split[:0]) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}); n > 2 {
		t.Errorf("profiles SplitResource: %v allocations, want at most 2", n)
	}
	nres := must(nested.Resource())
	if n := testing.AllocsPerRun(20, func() { _, _ = nres.Hash() }); n > 1 {
		t.Errorf("profiles Hash of a resource with nested values: %v allocations, want at most 1", n)
	}
}
