// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

// Profiles vectors: requests whose resources share one dictionary, read the
// way the OTLP receiver reads them (pprofileotlp, which resolves resource
// and scope attributes written as string-table references). The item keys
// are the samples, each rendered with everything it references resolved
// (sampleKey, which otlpwire's golden test renders the same way), so a
// wrong count, split or dictionary shows.

func decodeProfiles(b []byte) (decoded, error) {
	req := pprofileotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		return decoded{}, err
	}
	pd := req.Profiles()
	dict := pd.Dictionary()
	d := decoded{items: pd.SampleCount()}
	for _, rp := range pd.ResourceProfiles().All() {
		r := newResource(rp.Resource(), rp.SchemaUrl())
		for _, sp := range rp.ScopeProfiles().All() {
			n := 0
			r.Profiles += sp.Profiles().Len()
			for _, p := range sp.Profiles().All() {
				for _, s := range p.Samples().All() {
					r.ItemKeys = append(r.ItemKeys, sampleKey(dict, sp.Scope().Name(), p, s))
					n++
				}
			}
			r.addScope(sp.Scope(), n)
		}
		d.resources = append(d.resources, r)
	}
	return d, nil
}

// sampleKey renders a sample: scope/type:unit|frames|attributes|link|values,
// frames as mapping@function/system/file:line,... for every location of its
// stack (locations separated by ";", each followed by its attributes in
// braces), attributes as key=text[unit], the link as its trace id: every
// string a sample reaches through the dictionary, so that a pruned
// dictionary that lost one shows.
func sampleKey(dict pprofile.ProfilesDictionary, scope string, p pprofile.Profile, s pprofile.Sample) string {
	str := func(i int32) string {
		if i < 0 || int(i) >= dict.StringTable().Len() {
			return "?"
		}
		return dict.StringTable().At(int(i))
	}
	attr := func(i int32) string {
		a := dict.AttributeTable().At(int(i))
		return str(a.KeyStrindex()) + "=" + a.Value().AsString() + "[" + str(a.UnitStrindex()) + "]"
	}
	var b strings.Builder
	b.WriteString(scope + "/" + str(p.SampleType().TypeStrindex()) + ":" + str(p.SampleType().UnitStrindex()) + "|")
	if st := s.StackIndex(); st > 0 && int(st) < dict.StackTable().Len() {
		for k, li := range dict.StackTable().At(int(st)).LocationIndices().All() {
			loc := dict.LocationTable().At(int(li))
			if k > 0 {
				b.WriteString(";")
			}
			if mi := loc.MappingIndex(); mi >= 0 && int(mi) < dict.MappingTable().Len() {
				b.WriteString(str(dict.MappingTable().At(int(mi)).FilenameStrindex()))
			}
			b.WriteString("@")
			for j, ln := range loc.Lines().All() {
				if j > 0 {
					b.WriteString(",")
				}
				f := dict.FunctionTable().At(int(ln.FunctionIndex()))
				b.WriteString(str(f.NameStrindex()) + "/" + str(f.SystemNameStrindex()) + "/" + str(f.FilenameStrindex()) + ":" +
					strconv.FormatInt(ln.Line(), 10))
			}
			for _, ai := range loc.AttributeIndices().All() {
				b.WriteString("{" + attr(ai) + "}")
			}
		}
	}
	b.WriteString("|")
	for k, ai := range s.AttributeIndices().All() {
		if k > 0 {
			b.WriteString(",")
		}
		b.WriteString(attr(ai))
	}
	b.WriteString("|")
	if li := s.LinkIndex(); li > 0 {
		tid := dict.LinkTable().At(int(li)).TraceID()
		b.WriteString(hex.EncodeToString(tid[:]))
	}
	b.WriteString("|")
	for k, v := range s.Values().All() {
		if k > 0 {
			b.WriteString(",")
		}
		b.WriteString(strconv.FormatInt(v, 10))
	}
	return b.String()
}

// buildProfiles returns three resources sharing one dictionary: the second
// with an empty scope and an empty profile, the third without scopes.
func buildProfiles() pprofile.Profiles {
	pd := pprofile.NewProfiles()
	dict := pd.Dictionary()
	strs := dict.StringTable()
	strs.Append("")
	s := func(v string) int32 { strs.Append(v); return int32(strs.Len() - 1) }
	dict.MappingTable().AppendEmpty()
	dict.MappingTable().AppendEmpty().SetFilenameStrindex(s("/bin/app"))
	dict.MappingTable().AppendEmpty().SetFilenameStrindex(s("/lib/libc.so"))
	dict.FunctionTable().AppendEmpty()
	for i := range 6 {
		f := dict.FunctionTable().AppendEmpty()
		f.SetNameStrindex(s(fmt.Sprintf("main.f%d", i)))
		f.SetSystemNameStrindex(s(fmt.Sprintf("_ZN4main2f%dE", i)))
		f.SetFilenameStrindex(s(fmt.Sprintf("main%d.go", i%2)))
	}
	dict.LocationTable().AppendEmpty()
	for i := range 8 {
		loc := dict.LocationTable().AppendEmpty()
		loc.SetMappingIndex(int32(1 + i%4/3)) // every fourth in libc
		loc.SetAddress(uint64(0x1000 + i*16))
		loc.Lines().AppendEmpty().SetFunctionIndex(int32(1 + i%6))
		loc.Lines().At(0).SetLine(int64(10 + i))
		if i%4 == 1 {
			loc.AttributeIndices().Append(3) // only locations reference it
		}
		if i%3 == 0 { // an inlined caller
			ln := loc.Lines().AppendEmpty()
			ln.SetFunctionIndex(int32(1 + (i+1)%6))
			ln.SetLine(int64(100 + i))
		}
	}
	dict.StackTable().AppendEmpty()
	for i := range 5 {
		st := dict.StackTable().AppendEmpty()
		for k := range 2 + i {
			st.LocationIndices().Append(int32(1 + (i+k)%8))
		}
	}
	dict.AttributeTable().AppendEmpty()
	a := dict.AttributeTable().AppendEmpty()
	a.SetKeyStrindex(s("thread.name"))
	a.Value().SetStr("worker")
	a = dict.AttributeTable().AppendEmpty()
	a.SetKeyStrindex(s("thread.id"))
	a.Value().SetInt(7)
	a = dict.AttributeTable().AppendEmpty()
	a.SetKeyStrindex(s("frame.size"))
	a.Value().SetInt(64)
	a.SetUnitStrindex(s("By"))
	dict.LinkTable().AppendEmpty()
	l := dict.LinkTable().AppendEmpty()
	l.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	l.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	cpu, ns := s("cpu"), s("nanoseconds")
	for i := range 3 {
		rp := pd.ResourceProfiles().AppendEmpty()
		fillResource(rp.Resource(), i)
		rp.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
		for j := range 2 - i {
			sp := rp.ScopeProfiles().AppendEmpty()
			sp.Scope().SetName(fmt.Sprintf("profiler-%d", j))
			sp.Scope().SetVersion("1.0")
			sp.Scope().Attributes().PutStr("profiler.mode", "ebpf")
			if i == 1 && j == 0 {
				continue // an empty scope
			}
			for k := range 2 {
				p := sp.Profiles().AppendEmpty()
				p.SampleType().SetTypeStrindex(cpu)
				p.SampleType().SetUnitStrindex(ns)
				p.SetPeriod(1e7)
				if i == 1 && k == 1 {
					continue // an empty profile
				}
				for n := range 3 + i + k {
					smp := p.Samples().AppendEmpty()
					smp.SetStackIndex(int32(1 + (i+n)%5))
					smp.Values().Append(int64(10*i + n + 1))
					if n%2 == 1 {
						smp.AttributeIndices().Append(int32(1 + n%2))
					}
					if n == 2 {
						smp.SetLinkIndex(1)
					}
				}
			}
		}
	}
	return pd
}

func profilesVectors() []source {
	pd := buildProfiles()
	b, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
	if err != nil {
		panic(err)
	}
	dict, resources := cutDictionary(b)
	half := len(dict) / 2
	for half < len(dict) && !fieldStart(dict, half) {
		half++
	}
	out := []source{
		{name: "profiles-shared/pdata", signal: "profiles", b: b, single: profileSingles(b)},
		// The same request with the dictionary after the resources, and
		// cut in two fields around them (protobuf concatenates the two).
		{name: "profiles-shared/dictionary-last", signal: "profiles", b: cat(resources, m(2, dict))},
		{name: "profiles-shared/dictionary-split", signal: "profiles", b: cat(m(2, dict[:half]), resources, m(2, dict[half:]))},
		// Attributes written inline rather than by reference, as an SDK may.
		{name: "profiles-inline/hand", signal: "profiles", b: cat(
			m(1, m(1, kv("service.name", str(1, "inline")), kv("k8s.pod.uid", str(1, "u-1"))),
				m(2, m(1, str(1, "sc")), m(2, m(1, vint(1, 1), vint(2, 2)), m(2, vint(1, 1)), m(2, vint(1, 1))))),
			m(2, str(5, ""), str(5, "cpu"), str(5, "ns"), m(7), m(7, vint(1, 1)), m(2), m(2, m(3, vint(1, 1))),
				m(3), m(3, vint(1, 1))))},
		{name: "profiles-empty/hand", signal: "profiles", b: cat(m(1), m(1, m(2)), m(1, m(2, m(2))), m(2))},
	}
	sample := func(fields ...[]byte) []byte { return m(1, m(2, m(2, m(2, cat(fields...))))) }
	profile := func(fields ...[]byte) []byte { return m(1, m(2, m(2, cat(fields...)))) }
	strs := m(2, str(5, ""), str(5, "a"))
	return append(out,
		source{name: "profiles-malformed/truncated-dictionary", signal: "profiles", b: cat(m(1, m(2, m(2))), []byte{0x12, 0x05, 0x2a}), err: "truncated"},
		source{name: "profiles-malformed/wire-type-samples", signal: "profiles", b: profile(vint(2, 1)), err: "profiles_version"},
		// Laid out by earlier releases of the profiles proto.
		source{name: "profiles-version/v1.9-sample-attribute-indices", signal: "profiles", b: sample(vint(1, 1), m(3, []byte{1, 2})), err: "profiles_version"},
		source{name: "profiles-version/v1.8-profile-attribute-indices", signal: "profiles", b: profile(m(2), m(12, []byte{1})), err: "profiles_version", pdataAccepts: true},
		source{name: "profiles-version/v1.7-location-indices", signal: "profiles", b: profile(m(3, []byte{1, 2})), err: "profiles_version"},
		source{name: "profiles-version/v1.7-sample-timestamps", signal: "profiles", b: sample(vint(1, 1), m(6, []byte{1})), err: "profiles_version", pdataAccepts: true},
		source{name: "profiles-version/request-field-3", signal: "profiles", b: cat(m(1), m(3, m(1))), err: "profiles_version", pdataAccepts: true},
		source{name: "profiles-version/dictionary-field-8", signal: "profiles", b: cat(m(1), m(2, m(8))), err: "profiles_version", pdataAccepts: true},
		source{name: "profiles-version/resource-field-1000", signal: "profiles", b: m(1, m(1000, m(2, m(2)))), err: "profiles_version", pdataAccepts: true},
		// String references pdata cannot resolve, in the resource, which
		// counting walks past.
		source{name: "profiles-malformed/key-strindex-beyond", signal: "profiles", b: cat(m(1, m(1, m(1, vint(3, 9), m(2, str(1, "v"))))), strs), err: "strindex", errAt: "strindex"},
		source{name: "profiles-malformed/value-strindex-beyond", signal: "profiles", b: cat(m(1, m(1, m(1, str(1, "k"), m(2, vint(8, 2))))), strs), err: "strindex", errAt: "strindex"},
		source{name: "profiles-malformed/key-and-key-strindex", signal: "profiles", b: cat(m(1, m(1, m(1, str(1, "k"), vint(3, 1), m(2, str(1, "v"))))), strs), err: "strindex", errAt: "strindex"},
		source{name: "profiles-malformed/nested-strindex-beyond", signal: "profiles", b: cat(m(1, m(1, m(1, str(1, "k"), m(2, m(5, m(1, vint(8, 7))))))), strs), err: "strindex", errAt: "strindex"},
	)
}

// cutDictionary returns the payload of the dictionary field of a request
// pdata wrote (one field 2) and its other fields.
func cutDictionary(b []byte) (dict, rest []byte) {
	for pos := 0; pos < len(b); {
		tag := b[pos]
		n, p := 0, pos+1
		for shift := 0; ; shift += 7 {
			c := b[p]
			p++
			n |= int(c&0x7f) << shift
			if c < 0x80 {
				break
			}
		}
		if tag == 0x12 {
			dict = b[p : p+n]
		} else {
			rest = append(rest, b[pos:p+n]...)
		}
		pos = p + n
	}
	return dict, rest
}

// fieldStart reports whether a dictionary field starts at offset off of
// dict (walking it from the start).
func fieldStart(dict []byte, off int) bool {
	for pos := 0; pos < len(dict); {
		if pos == off {
			return true
		}
		n, p := 0, pos+1
		for shift := 0; ; shift += 7 {
			c := dict[p]
			p++
			n |= int(c&0x7f) << shift
			if c < 0x80 {
				break
			}
		}
		pos = p + n
	}
	return false
}

// profileSingles returns single for a request pdata wrote: the request
// holding resource r with only one of its profiles (the one holding sample
// item) and the whole dictionary, as pdata writes it.
func profileSingles(b []byte) func(r, item int) []byte {
	return func(r, item int) []byte {
		pd, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(b)
		if err != nil {
			panic(err)
		}
		rp := pd.ResourceProfiles().At(r)
		n := 0
		for _, sp := range rp.ScopeProfiles().All() {
			for _, p := range sp.Profiles().All() {
				if item >= n && item < n+p.Samples().Len() {
					one := pprofile.NewProfiles()
					pd.Dictionary().CopyTo(one.Dictionary())
					orp := one.ResourceProfiles().AppendEmpty()
					rp.Resource().CopyTo(orp.Resource())
					orp.SetSchemaUrl(rp.SchemaUrl())
					osp := orp.ScopeProfiles().AppendEmpty()
					sp.Scope().CopyTo(osp.Scope())
					osp.SetSchemaUrl(sp.SchemaUrl())
					p.CopyTo(osp.Profiles().AppendEmpty())
					out, err := pprofileotlp.NewExportRequestFromProfiles(one).MarshalProto()
					if err != nil {
						panic(err)
					}
					return out
				}
				n += p.Samples().Len()
			}
		}
		panic("no such sample")
	}
}
