// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The edges of the profiles code that the golden vectors do not reach:
// the last field number a strict schema knows, tables whose only entry
// referenced is 0, a string value at index 0, nesting at the limit.

// oneSampleRequest is a request of one resource (attributes attrs, KeyValue
// fields) with one sample whose stack is entry 1, over dictionary dict
// (ProfilesDictionary fields).
func oneSampleRequest(attrs, dict []byte) []byte {
	sample := varintField(1, 1)
	resource := msg(1, msg(1, attrs))
	if len(attrs) == 0 {
		resource = nil
	}
	return bytes.Join([][]byte{msg(1, resource, msg(2, msg(2, msg(2, sample)))), msg(2, dict)}, nil)
}

// onlyResource returns the one resource of oneSampleRequest(attrs, dict),
// and its Resource view.
func onlyResource(t *testing.T, attrs, dict []byte) (ResourceData, Resource) {
	t.Helper()
	var out ResourceData
	n := 0
	for rd, err := range NewRequest(SignalProfiles, oneSampleRequest(attrs, dict)).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		out = rd
		n++
	}
	if n != 1 {
		t.Fatalf("%d resources, want 1", n)
	}
	res, err := out.Resource()
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

// A field number one past the schema's table is refused like any other
// the layout does not define.
func TestProfilesFieldPastTheSchema(t *testing.T) {
	b := msg(1, msg(2, msg(2, msg(2, varintField(1, 1), varintField(17, 1)))))
	_, err := NewRequest(SignalProfiles, b).ItemCount()
	if !errors.Is(err, ErrProfilesVersion) || !strings.Contains(err.Error(), "field 17") || !strings.Contains(err.Error(), "does not define") {
		t.Fatalf("%v: want ErrProfilesVersion naming field 17", err)
	}
}

// A table whose only entry referenced is entry 0 keeps that entry when
// pruned: every location here has mapping 0.
func TestPruneKeepsEntryZero(t *testing.T) {
	dict := bytes.Join([][]byte{
		msg(1, nil), msg(1, varintField(4, 1)), // mappings: 0, and 1 naming "lib"
		msg(2, nil), msg(2, msg(3, varintField(1, 1))), // locations: 0, and 1 with mapping 0, function 1
		msg(3, nil), msg(3, varintField(1, 2)), // functions: 0, and 1 named "f"
		msg(5, nil), msg(5, []byte("lib")), msg(5, []byte("f")),
		msg(7, nil), msg(7, msg(1, []byte{1})), // stacks: 0, and 1 of location 1
	}, nil)
	rd, _ := onlyResource(t, nil, dict)
	out, err := AppendRequestPruned(nil, rd, &PruneScratch{})
	if err != nil {
		t.Fatal(err)
	}
	for r, err := range NewRequest(SignalProfiles, out).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		tables := dictTables(t, r)
		if n := len(tables[tableMapping]); n != 1 {
			t.Errorf("the pruned mapping table has %d entries, want entry 0 alone", n)
		}
		if s := tables[tableString]; len(s) != 3 || string(s[2]) != "f" || len(s[1]) != 0 {
			t.Errorf("pruned strings %q, want \"\", an emptied \"lib\" and \"f\"", s)
		}
	}
}

// string_value_strindex 0 names the empty string, as in pdata; an index
// past the table is malformed.
func TestProfilesStringValueAtIndexZero(t *testing.T) {
	dict := bytes.Join([][]byte{msg(5, nil), msg(5, []byte("k")), msg(7, nil), msg(7, nil)}, nil)
	for _, c := range []struct {
		index uint64
		ok    bool
	}{{0, true}, {1, true}, {2, false}} {
		attrs := bytes.Join([][]byte{varintField(3, 1), msg(2, varintField(8, c.index))}, nil)
		_, res := onlyResource(t, attrs, dict)
		v, found, err := res.Attribute("k")
		if (err == nil) != c.ok || (c.ok && (!found || v.Kind() != ValueKindStr)) {
			t.Fatalf("string_value_strindex %d: %v, %v, %v", c.index, v.Kind(), found, err)
		}
		if c.ok {
			want := []string{"", "k"}[c.index]
			if s := v.Str(); string(s) != want {
				t.Errorf("string_value_strindex %d reads %q, want %q", c.index, s, want)
			}
		}
	}
}

// The same inside an array: its elements resolve through the dictionary
// too.
func TestProfilesNestedStringValueAtIndexZero(t *testing.T) {
	dict := bytes.Join([][]byte{msg(5, nil), msg(5, []byte("k")), msg(7, nil), msg(7, nil)}, nil)
	for _, c := range []struct {
		index uint64
		ok    bool
	}{{0, true}, {1, true}, {2, false}} {
		array := msg(5, msg(1, varintField(8, c.index))) // AnyValue.array_value: one element
		attrs := bytes.Join([][]byte{varintField(3, 1), msg(2, array)}, nil)
		_, res := onlyResource(t, attrs, dict)
		v, found, err := res.Attribute("k")
		if !c.ok {
			// The attribute is validated whole, elements included.
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("string_value_strindex %d in an array: %v, want ErrMalformed from Attribute", c.index, err)
			}
			continue
		}
		if err != nil || !found || v.Kind() != ValueKindSlice {
			t.Fatalf("string_value_strindex %d in an array: %v, %v, %v", c.index, v.Kind(), found, err)
		}
		var got []string
		var last error
		for e, err := range v.Slice() {
			if err != nil {
				last = err
				break
			}
			got = append(got, string(e.Str()))
		}
		if (last == nil) != c.ok {
			t.Fatalf("string_value_strindex %d in an array: %q, %v", c.index, got, last)
		}
		if want := []string{"", "k"}; c.ok && (len(got) != 1 || got[0] != want[c.index]) {
			t.Errorf("string_value_strindex %d in an array reads %q", c.index, got)
		}
	}
}

// Pruning refuses a resource attribute nested past the limit, as every
// other read of it does.
func TestPruneRefusesTooDeepAttributes(t *testing.T) {
	dict := bytes.Join([][]byte{msg(5, nil), msg(7, nil), msg(7, nil)}, nil)
	for _, n := range []int{100, 101} {
		for _, kind := range []string{"array", "kvlist"} {
			p := pb{}
			p.str(1, "deep")
			p.bytesAlways(2, nested(n, kind))
			for rd, err := range NewRequest(SignalProfiles, oneSampleRequest(p.b, dict)).Resources() {
				if err != nil {
					t.Fatal(err)
				}
				// Not through onlyResource: Resource itself refuses it.
				_, err := AppendRequestPruned(nil, rd, &PruneScratch{})
				if refused := n > 100; refused != errors.Is(err, errTooDeep) {
					t.Fatalf("%s %d deep: AppendRequestPruned: %v (refused above 100)", kind, n, err)
				}
			}
		}
	}
}

// A hash of no key still validates the attributes, as the other reads
// of a profiles resource do: a key_strindex past the string table fails
// it, an index inside succeeds.
func TestProfilesHashOfNoKeyValidates(t *testing.T) {
	dict := bytes.Join([][]byte{msg(5, nil), msg(5, []byte("k")), msg(7, nil), msg(7, nil)}, nil)
	for _, c := range []struct {
		index uint64
		ok    bool
	}{{1, true}, {9, false}} {
		_, res := onlyResource(t, varintField(3, c.index), dict)
		_, found, err := res.HashKeysWith(HashV2, nil)
		if (err == nil) != c.ok || found != 0 {
			t.Fatalf("key_strindex %d: HashKeysWith of no key: %d, %v", c.index, found, err)
		}
	}
}

// key_strindex is read as pdata reads an int32: 1<<32 keeps its low 32
// bits, 0, and names no string, whatever string 0 holds (pdata then keeps
// the empty inline key).
func TestProfilesKeyStrindexTruncatesLikePdata(t *testing.T) {
	dict := bytes.Join([][]byte{msg(5, []byte("zero")), msg(5, []byte("k")), msg(7, nil), msg(7, nil)}, nil)
	attrs := bytes.Join([][]byte{varintField(3, 1<<32), msg(2, msg(1, []byte("v")))}, nil)
	_, res := onlyResource(t, attrs, dict)
	var keys []string
	for kv, err := range res.Attributes() {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, string(kv.Key()))
	}
	if len(keys) != 1 || keys[0] != "" {
		t.Fatalf("keys %q, want the one empty key pdata reads", keys)
	}
}

// An inline key with a string value at index 0: the value resolves and
// the key stays the inline one.
func TestProfilesInlineKeyWithStringValueAtZero(t *testing.T) {
	dict := bytes.Join([][]byte{msg(5, []byte("zero")), msg(7, nil), msg(7, nil)}, nil)
	attrs := bytes.Join([][]byte{msg(1, []byte("a")), msg(2, varintField(8, 0))}, nil)
	_, res := onlyResource(t, attrs, dict)
	v, found, err := res.Attribute("a")
	if err != nil || !found || string(v.Str()) != "zero" {
		t.Fatalf("a = %q, %v, %v; want \"zero\"", v.Str(), found, err)
	}
}

// A string reference past the table inside a kvlist value fails the read
// of the attribute, as inside an array.
func TestProfilesNestedKvlistReferencePastTheTable(t *testing.T) {
	dict := bytes.Join([][]byte{msg(5, nil), msg(5, []byte("k")), msg(7, nil), msg(7, nil)}, nil)
	for _, c := range []struct {
		index uint64
		ok    bool
	}{{1, true}, {7, false}} {
		kvlist := msg(6, msg(1, varintField(3, c.index), msg(2, msg(1, []byte("v"))))) // AnyValue.kvlist_value: one entry keyed by reference
		attrs := bytes.Join([][]byte{varintField(3, 1), msg(2, kvlist)}, nil)
		_, res := onlyResource(t, attrs, dict)
		_, found, err := res.Attribute("k")
		if c.ok != (err == nil) || (!c.ok && !errors.Is(err, ErrMalformed)) || c.ok != found {
			t.Fatalf("key_strindex %d in a kvlist: found %v, %v", c.index, found, err)
		}
	}
}

// The same two arrays deep.
func TestProfilesReferencePastTheTableTwoArraysDeep(t *testing.T) {
	dict := bytes.Join([][]byte{msg(5, nil), msg(5, []byte("k")), msg(7, nil), msg(7, nil)}, nil)
	for _, c := range []struct {
		index uint64
		ok    bool
	}{{1, true}, {7, false}} {
		inner := msg(5, msg(1, varintField(8, c.index)))
		outer := msg(5, msg(1, inner))
		attrs := bytes.Join([][]byte{varintField(3, 1), msg(2, outer)}, nil)
		_, res := onlyResource(t, attrs, dict)
		_, found, err := res.Attribute("k")
		if c.ok != (err == nil) || (!c.ok && !errors.Is(err, ErrMalformed)) || c.ok != found {
			t.Fatalf("string_value_strindex %d two arrays deep: found %v, %v", c.index, found, err)
		}
	}
}

// A kvlist value whose entries are keyed by reference hashes as the same
// kvlist written inline in a traces resource: its entries and their number
// are part of the hash (a count off by any amount changes it).
func TestProfilesKvlistByReferenceHashesAsInline(t *testing.T) {
	dict := bytes.Join([][]byte{msg(5, nil), msg(5, []byte("k")), msg(5, []byte("j")), msg(7, nil)}, nil)
	entry := func(key []byte, value string) []byte {
		return msg(1, key, msg(2, msg(1, []byte(value))))
	}
	byRef := msg(2, msg(6, entry(varintField(3, 1), "v"), entry(varintField(3, 2), "w")))
	inline := msg(2, msg(6, entry(msg(1, []byte("k")), "v"), entry(msg(1, []byte("j")), "w")))
	_, profiles := onlyResource(t, bytes.Join([][]byte{varintField(3, 1), byRef}, nil), dict)
	var traces Resource
	for rd, err := range NewRequest(SignalTraces, msg(1, msg(1, msg(1, msg(1, []byte("k")), inline)))).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		if traces, err = rd.Resource(); err != nil {
			t.Fatal(err)
		}
	}
	for _, ver := range []HashVersion{HashV1, HashV2} {
		want, err := traces.HashWith(ver)
		if err != nil {
			t.Fatal(err)
		}
		got, err := profiles.HashWith(ver)
		if err != nil || got != want {
			t.Errorf("hash v%d of the kvlist by reference = %#x, %v; inline %#x", ver, got, err, want)
		}
	}
}
