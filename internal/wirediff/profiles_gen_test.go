// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

// profShape sizes a generated profiles request. Every resource draws its
// stacks from one shared dictionary, so resources share functions,
// locations, strings and attributes.
type profShape struct {
	resources, scopes, profiles, samples int
	functions, locations, stacks, depth  int
	attrs                                int // resource attributes (genAttrs)
}

// genProfiles builds a profiles request as a profiler would: one dictionary
// (entry 0 of every table the zero value), then resources whose samples
// reference it.
func genProfiles(seed uint64, sh profShape) pprofile.Profiles {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pd := pprofile.NewProfiles()
	dict := pd.Dictionary()
	strs := dict.StringTable()
	strs.Append("")
	str := func(s string) int32 {
		strs.Append(s)
		return int32(strs.Len() - 1)
	}
	dict.MappingTable().AppendEmpty()
	for i := range 3 {
		m := dict.MappingTable().AppendEmpty()
		m.SetMemoryStart(uint64(0x400000 * (i + 1)))
		m.SetMemoryLimit(uint64(0x400000*(i+1) + 0x100000))
		m.SetFilenameStrindex(str(fmt.Sprintf("/usr/lib/lib%d.so", i)))
	}
	dict.AttributeTable().AppendEmpty()
	for i := range 6 {
		a := dict.AttributeTable().AppendEmpty()
		a.SetKeyStrindex(str(fmt.Sprintf("thread.name.%d", i%3)))
		switch i % 3 {
		case 0:
			a.Value().SetStr(fmt.Sprintf("worker-%d", i))
		case 1:
			a.Value().SetInt(int64(i * 1000))
		default:
			a.Value().SetStr(fmt.Sprintf("pool-%d", i))
			a.SetUnitStrindex(str("By"))
		}
	}
	dict.LinkTable().AppendEmpty()
	for range 3 {
		l := dict.LinkTable().AppendEmpty()
		tid, sid := randIDs(r)
		l.SetTraceID(tid)
		l.SetSpanID(sid)
	}
	dict.FunctionTable().AppendEmpty()
	for i := range sh.functions {
		f := dict.FunctionTable().AppendEmpty()
		f.SetNameStrindex(str(fmt.Sprintf("pkg%d.fn%d", i%17, i)))
		f.SetSystemNameStrindex(str(fmt.Sprintf("_Z%dfn%d", i%17, i)))
		f.SetFilenameStrindex(str(fmt.Sprintf("src/pkg%d/file%d.go", i%17, i%40)))
		f.SetStartLine(int64(10 + i))
	}
	dict.LocationTable().AppendEmpty()
	for i := range sh.locations {
		loc := dict.LocationTable().AppendEmpty()
		loc.SetMappingIndex(int32(1 + i%3))
		loc.SetAddress(uint64(0x401000 + 16*i))
		for k := range 1 + r.IntN(2) { // an inlined frame now and then
			ln := loc.Lines().AppendEmpty()
			ln.SetFunctionIndex(int32(1 + r.IntN(sh.functions)))
			ln.SetLine(int64(20 + k + r.IntN(500)))
		}
		if i%7 == 0 {
			loc.AttributeIndices().Append(int32(1 + r.IntN(6)))
		}
	}
	dict.StackTable().AppendEmpty()
	for range sh.stacks {
		st := dict.StackTable().AppendEmpty()
		for range 1 + r.IntN(sh.depth) {
			st.LocationIndices().Append(int32(1 + r.IntN(sh.locations)))
		}
	}
	cpu, ns := str("cpu"), str("nanoseconds")
	for i := range sh.resources {
		rp := pd.ResourceProfiles().AppendEmpty()
		genResource(r, rp.Resource(), i, sh.attrs)
		rp.SetSchemaUrl("https://opentelemetry.io/schemas/1.30.0")
		// Each resource draws from its own window of stacks, overlapping
		// its neighbours'.
		lo := r.IntN(max(1, sh.stacks/2))
		for j := range sh.scopes {
			sp := rp.ScopeProfiles().AppendEmpty()
			genScope(r, sp.Scope(), j)
			for k := range sh.profiles {
				p := sp.Profiles().AppendEmpty()
				p.SampleType().SetTypeStrindex(cpu)
				p.SampleType().SetUnitStrindex(ns)
				p.PeriodType().SetTypeStrindex(cpu)
				p.PeriodType().SetUnitStrindex(ns)
				p.SetPeriod(10_000_000)
				p.SetTime(pcommon.Timestamp(1_700_000_000_000_000_000 + uint64(k)))
				p.SetDurationNano(uint64(1e9))
				p.SetProfileID(pprofile.ProfileID{byte(i), byte(j), byte(k), 1})
				if k%2 == 0 {
					p.AttributeIndices().Append(int32(1 + r.IntN(6)))
				}
				for range sh.samples {
					s := p.Samples().AppendEmpty()
					s.SetStackIndex(int32(1 + (lo+r.IntN(max(1, sh.stacks/2)))%sh.stacks))
					s.Values().Append(int64(1 + r.IntN(5)))
					if r.IntN(3) == 0 {
						s.AttributeIndices().Append(int32(1 + r.IntN(6)))
					}
					if r.IntN(5) == 0 {
						s.SetLinkIndex(int32(1 + r.IntN(3)))
					}
					if r.IntN(4) == 0 {
						s.TimestampsUnixNano().Append(1_700_000_000_000_000_000 + uint64(r.IntN(1e9)))
					}
				}
			}
		}
	}
	return pd
}

// marshalProfiles encodes pd the way a pdata exporter does (which moves
// resource and scope attribute strings into the dictionary).
func marshalProfiles(pd pprofile.Profiles) []byte {
	b, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
	if err != nil {
		panic(err)
	}
	return b
}

// unmarshalProfiles reads b as the OTLP receiver does.
func unmarshalProfiles(b []byte) (pprofile.Profiles, error) {
	req := pprofileotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		return pprofile.Profiles{}, err
	}
	return req.Profiles(), nil
}

// resolvedSamples renders every sample of rp with everything it references
// resolved through dict: scope, profile type, function names and lines of
// its stack, attributes, link and values. Equal renderings mean equal
// profiles whatever the dictionary's layout.
func resolvedSamples(dict pprofile.ProfilesDictionary, rp pprofile.ResourceProfiles) []string {
	strs := dict.StringTable()
	s := func(i int32) string {
		if i < 0 || int(i) >= strs.Len() {
			return fmt.Sprintf("<bad string %d>", i)
		}
		return strs.At(int(i))
	}
	attr := func(i int32) string {
		at := dict.AttributeTable()
		if i < 0 || int(i) >= at.Len() {
			return fmt.Sprintf("<bad attribute %d>", i)
		}
		a := at.At(int(i))
		return s(a.KeyStrindex()) + "=" + a.Value().AsString() + "[" + s(a.UnitStrindex()) + "]"
	}
	// Each location renders once: a CPU profile repeats them in every stack.
	locations := map[int32]string{}
	location := func(li int32) string {
		if r, ok := locations[li]; ok {
			return r
		}
		var b strings.Builder
		if li < 0 || int(li) >= dict.LocationTable().Len() {
			return fmt.Sprintf(" <bad location %d>", li)
		}
		loc := dict.LocationTable().At(int(li))
		if mi := loc.MappingIndex(); mi >= 0 && int(mi) < dict.MappingTable().Len() {
			fmt.Fprintf(&b, " %s", s(dict.MappingTable().At(int(mi)).FilenameStrindex()))
		} else {
			fmt.Fprintf(&b, " <bad mapping %d>", mi)
		}
		fmt.Fprintf(&b, "+%x", loc.Address())
		for _, ln := range loc.Lines().All() {
			fi := ln.FunctionIndex()
			if fi < 0 || int(fi) >= dict.FunctionTable().Len() {
				fmt.Fprintf(&b, " <bad function %d>", fi)
				continue
			}
			f := dict.FunctionTable().At(int(fi))
			fmt.Fprintf(&b, " %s(%s:%d)", s(f.NameStrindex()), s(f.FilenameStrindex()), ln.Line())
		}
		for _, a := range loc.AttributeIndices().All() {
			b.WriteString(" @" + attr(a))
		}
		locations[li] = b.String()
		return locations[li]
	}
	var out []string
	for _, sp := range rp.ScopeProfiles().All() {
		for _, p := range sp.Profiles().All() {
			head := fmt.Sprintf("%s/%s %s/%s %d", sp.Scope().Name(), s(p.SampleType().TypeStrindex()),
				s(p.PeriodType().UnitStrindex()), p.ProfileID(), p.Time())
			for _, a := range p.AttributeIndices().All() {
				head += " " + attr(a)
			}
			for _, smp := range p.Samples().All() {
				var b strings.Builder
				b.WriteString(head)
				b.WriteString(" |")
				st := dict.StackTable()
				if i := smp.StackIndex(); i >= 0 && int(i) < st.Len() {
					for _, li := range st.At(int(i)).LocationIndices().All() {
						b.WriteString(location(li))
					}
				} else {
					fmt.Fprintf(&b, " <bad stack %d>", i)
				}
				for _, a := range smp.AttributeIndices().All() {
					b.WriteString(" " + attr(a))
				}
				if li := smp.LinkIndex(); li != 0 {
					if li < 0 || int(li) >= dict.LinkTable().Len() {
						fmt.Fprintf(&b, " <bad link %d>", li)
					} else {
						l := dict.LinkTable().At(int(li))
						fmt.Fprintf(&b, " link=%s/%s", l.TraceID(), l.SpanID())
					}
				}
				fmt.Fprintf(&b, " v=%v t=%v", smp.Values().AsRaw(), smp.TimestampsUnixNano().AsRaw())
				out = append(out, b.String())
			}
		}
	}
	return out
}

// profCases are the generated requests of the differential tests: small
// ones of every shape, empty containers, and a CPU profile of real shape.
func profCases() map[string]profShape {
	return map[string]profShape{
		"one":       {resources: 1, scopes: 1, profiles: 1, samples: 3, functions: 5, locations: 8, stacks: 4, depth: 4, attrs: 2},
		"shared":    {resources: 5, scopes: 2, profiles: 2, samples: 20, functions: 30, locations: 60, stacks: 40, depth: 12, attrs: 4},
		"empty":     {resources: 3, scopes: 1, profiles: 1, samples: 0, functions: 3, locations: 3, stacks: 2, depth: 2, attrs: 1},
		"no-scopes": {resources: 2, scopes: 0, functions: 3, locations: 3, stacks: 2, depth: 2, attrs: 3},
		"cpu": {resources: 8, scopes: 1, profiles: 2, samples: 2500, functions: 2000, locations: 6000,
			stacks: 3000, depth: 64, attrs: 6},
	}
}

// sortedKeys returns the names of profCases in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
