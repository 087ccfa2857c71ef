// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// The profiles vectors of golden.json carry, as item keys, every sample
// rendered with what it references resolved through the dictionary
// (internal/wiregolden's sampleKey). sampleKeys renders the samples of a
// resource the same way with this package's reader alone, through the
// dictionary the ResourceData carries, so that a split or pruned request
// whose dictionary or samples went wrong shows as a different key.

// dictTables returns the entries of every table of d's dictionary, in
// order (the tables of several dictionary fields concatenated).
func dictTables(t *testing.T, d ResourceData) [numTables + 1][][]byte {
	t.Helper()
	var tables [numTables + 1][][]byte
	add := func(payload []byte) {
		rd := newReader(payload, &schemaDictionary)
		for {
			num, err := rd.nextField()
			if err != nil {
				t.Fatal(err)
			}
			if num == 0 {
				return
			}
			tables[num] = append(tables[num], rd.data)
		}
	}
	if !d.span {
		add(d.dict)
		return tables
	}
	rd := newReader(d.dict, &schemaProfilesRequest)
	for {
		num, err := rd.nextField()
		if err != nil {
			t.Fatal(err)
		}
		if num == 0 {
			return tables
		}
		if num == fieldProfilesDictionary {
			add(rd.data)
		}
	}
}

// fieldValues returns every value of the numeric field num of b (packed
// or not), read with schema s.
func fieldValues(t *testing.T, b []byte, s *schema, num int32) []uint64 {
	t.Helper()
	var out []uint64
	rd := newReader(b, s)
	for {
		n, err := rd.nextField()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return out
		}
		if n != num {
			continue
		}
		if rd.typ != wireLen {
			out = append(out, rd.val)
			continue
		}
		for pos := 0; pos < len(rd.data); {
			v, next, err := consumeVarint(rd.data, pos)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
			pos = next
		}
	}
}

func lastValue(t *testing.T, b []byte, s *schema, num int32) uint64 {
	t.Helper()
	vs := fieldValues(t, b, s, num)
	if len(vs) == 0 {
		return 0
	}
	return vs[len(vs)-1]
}

func fieldMessages(t *testing.T, b []byte, s *schema, num int32) [][]byte {
	t.Helper()
	var out [][]byte
	rd := newReader(b, s)
	for {
		n, err := rd.nextField()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return out
		}
		if n == num {
			out = append(out, rd.data)
		}
	}
}

// sampleKeys renders every sample of d as wiregolden's sampleKey does.
func sampleKeys(t *testing.T, d ResourceData) []string {
	t.Helper()
	tables := dictTables(t, d)
	entry := func(table int32, i uint64) []byte {
		if int(int32(i)) < 0 || int(int32(i)) >= len(tables[table]) {
			t.Fatalf("table %d has no entry %d", table, int32(i))
		}
		return tables[table][int32(i)]
	}
	str := func(i uint64) string {
		if int(int32(i)) < 0 || int(int32(i)) >= len(tables[tableString]) {
			return "?"
		}
		return string(tables[tableString][int32(i)])
	}
	attr := func(ai uint64) string {
		a := entry(tableAttribute, ai)
		var text []byte
		for _, v := range fieldMessages(t, a, &schemaKeyValueAndUnit, 2) {
			text = must(NewValue(v)).AppendText(nil)
		}
		return str(lastValue(t, a, &schemaKeyValueAndUnit, 1)) + "=" + string(text) + "[" +
			str(lastValue(t, a, &schemaKeyValueAndUnit, 3)) + "]"
	}
	var out []string
	for sd, err := range d.Scopes() {
		if err != nil {
			t.Fatal(err)
		}
		name := must(must(sd.Scope()).Name())
		for _, p := range fieldMessages(t, sd.b, &schemaScopeProfiles, fieldItems) {
			var st []byte
			if m := fieldMessages(t, p, &schemaProfile, fieldProfileSampleType); len(m) > 0 {
				st = m[len(m)-1]
			}
			head := string(name) + "/" + str(lastValue(t, st, &schemaValueType, 1)) + ":" +
				str(lastValue(t, st, &schemaValueType, 2)) + "|"
			for _, s := range fieldMessages(t, p, &schemaProfile, fieldProfileSamples) {
				var b strings.Builder
				b.WriteString(head)
				if si := lastValue(t, s, &schemaSample, fieldSampleStack); si > 0 {
					for k, li := range fieldValues(t, entry(tableStack, si), &schemaStack, 1) {
						loc := entry(tableLocation, li)
						if k > 0 {
							b.WriteString(";")
						}
						if mi := lastValue(t, loc, &schemaLocation, 1); int(int32(mi)) >= 0 && int(int32(mi)) < len(tables[tableMapping]) {
							b.WriteString(str(lastValue(t, entry(tableMapping, mi), &schemaMapping, 4)))
						}
						b.WriteString("@")
						for j, ln := range fieldMessages(t, loc, &schemaLocation, 3) {
							if j > 0 {
								b.WriteString(",")
							}
							fn := entry(tableFunction, lastValue(t, ln, &schemaLine, 1))
							b.WriteString(str(lastValue(t, fn, &schemaFunction, 1)) + "/" + str(lastValue(t, fn, &schemaFunction, 2)) + "/" +
								str(lastValue(t, fn, &schemaFunction, 3)) + ":" + strconv.FormatInt(int64(lastValue(t, ln, &schemaLine, 2)), 10))
						}
						for _, ai := range fieldValues(t, loc, &schemaLocation, 4) {
							b.WriteString("{" + attr(ai) + "}")
						}
					}
				}
				b.WriteString("|")
				for k, ai := range fieldValues(t, s, &schemaSample, fieldSampleAttrs) {
					if k > 0 {
						b.WriteString(",")
					}
					b.WriteString(attr(ai))
				}
				b.WriteString("|")
				if li := lastValue(t, s, &schemaSample, fieldSampleLink); li > 0 {
					ids := fieldMessages(t, entry(tableLink, li), &schemaLink, 1)
					b.WriteString(hex.EncodeToString(ids[len(ids)-1]))
				}
				b.WriteString("|")
				for k, v := range fieldValues(t, s, &schemaSample, 4) {
					if k > 0 {
						b.WriteString(",")
					}
					b.WriteString(strconv.FormatInt(int64(v), 10))
				}
				out = append(out, b.String())
			}
		}
	}
	return out
}

// TestGoldenProfilesPruned: the request AppendRequestPruned builds for each
// resource holds its samples, resolved through the pruned dictionary, as
// pdata reads them, and its resource as pdata reads it; it is no larger
// than the request with the whole dictionary.
func TestGoldenProfilesPruned(t *testing.T) {
	var scratch PruneScratch
	for _, v := range goldenVectors(t) {
		if v.Error != "" || v.Signal != "profiles" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			i := 0
			for rd, err := range NewRequest(SignalProfiles, v.Request).Resources() {
				if err != nil {
					t.Fatal(err)
				}
				b, err := AppendRequestPruned(nil, rd, &scratch)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) > RequestSize(rd) {
					t.Fatalf("resource %d: pruned request of %d bytes, whole %d", i, len(b), RequestSize(rd))
				}
				for prd, err := range NewRequest(SignalProfiles, b).Resources() {
					if err != nil {
						t.Fatal(err)
					}
					checkResource(t, "pruned", prd, v.Resources[i])
					if got := sampleKeys(t, prd); strings.Join(got, "\n") != strings.Join(v.Resources[i].ItemKeys, "\n") {
						t.Fatalf("resource %d pruned:\n%q\npdata:\n%q", i, got, v.Resources[i].ItemKeys)
					}
				}
				i++
			}
		})
	}
}

// checkStrindexResource: a profiles resource whose attributes name a
// string pdata cannot resolve is counted (counting does not read the
// resource), but every reading of its attributes fails.
func checkStrindexResource(t *testing.T, req Request) {
	t.Helper()
	if _, err := req.ItemCount(); err != nil {
		t.Fatalf("ItemCount: %v; counting does not read the resource", err)
	}
	for rd, err := range req.Resources() {
		if err != nil {
			t.Fatal(err)
		}
		res := must(rd.Resource())
		is := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, ErrMalformed) || !errors.Is(err, errStrindex) {
				t.Fatalf("%s: %v, want the string-table index refused", what, err)
			}
		}
		var last error
		for kv, err := range res.Attributes() {
			last = err
			if err == nil {
				for _, err := range must(kv.Value()).Slice() {
					last = err
				}
			}
		}
		is("Attributes", last)
		_, err = res.Hash()
		is("Hash", err)
		_, err = res.HashWith(HashV2)
		is("HashWith(HashV2)", err)
		_, _, err = res.HashKeys([]string{"k"})
		is("HashKeys", err)
	}
}
