// SPDX-License-Identifier: Apache-2.0

// Package profilestest generates OTLP profiles requests for tests: one
// dictionary shared by every resource, stacks drawn from overlapping windows
// of it, as a host-wide profiler sends them; and renders samples with
// everything they reference resolved, so that two requests can be compared
// whatever the layout of their dictionaries.
package profilestest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

// Shape sizes a generated request. Every resource draws its stacks from one
// shared dictionary, so resources share functions, locations, strings and
// attributes.
type Shape struct {
	Resources, Scopes, Profiles, Samples int
	Functions, Locations, Stacks, Depth  int
	// Resource fills resource i; nil sets only service.name to svc-i.
	Resource func(r *rand.Rand, i int, res pcommon.Resource)
	// Scope fills scope j of each resource; nil names it scope-j.
	Scope func(r *rand.Rand, j int, sc pcommon.InstrumentationScope)
}

// Generate builds a profiles request as a profiler would: one dictionary
// (entry 0 of every table the zero value), then resources whose samples
// reference it. The same seed and shape give the same request.
func Generate(seed uint64, sh Shape) pprofile.Profiles {
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
		var tid pcommon.TraceID
		var sid pcommon.SpanID
		binary.LittleEndian.PutUint64(tid[:], r.Uint64())
		binary.LittleEndian.PutUint64(tid[8:], r.Uint64())
		binary.LittleEndian.PutUint64(sid[:], r.Uint64()|1)
		l.SetTraceID(tid)
		l.SetSpanID(sid)
	}
	dict.FunctionTable().AppendEmpty()
	for i := range sh.Functions {
		f := dict.FunctionTable().AppendEmpty()
		f.SetNameStrindex(str(fmt.Sprintf("pkg%d.fn%d", i%17, i)))
		f.SetSystemNameStrindex(str(fmt.Sprintf("_Z%dfn%d", i%17, i)))
		f.SetFilenameStrindex(str(fmt.Sprintf("src/pkg%d/file%d.go", i%17, i%40)))
		f.SetStartLine(int64(10 + i))
	}
	dict.LocationTable().AppendEmpty()
	for i := range sh.Locations {
		loc := dict.LocationTable().AppendEmpty()
		loc.SetMappingIndex(int32(1 + i%3))
		loc.SetAddress(uint64(0x401000 + 16*i))
		for k := range 1 + r.IntN(2) { // an inlined frame now and then
			ln := loc.Lines().AppendEmpty()
			ln.SetFunctionIndex(int32(1 + r.IntN(sh.Functions)))
			ln.SetLine(int64(20 + k + r.IntN(500)))
		}
		if i%7 == 0 {
			loc.AttributeIndices().Append(int32(1 + r.IntN(6)))
		}
	}
	dict.StackTable().AppendEmpty()
	for range sh.Stacks {
		st := dict.StackTable().AppendEmpty()
		for range 1 + r.IntN(sh.Depth) {
			st.LocationIndices().Append(int32(1 + r.IntN(sh.Locations)))
		}
	}
	cpu, ns := str("cpu"), str("nanoseconds")
	for i := range sh.Resources {
		rp := pd.ResourceProfiles().AppendEmpty()
		if sh.Resource != nil {
			sh.Resource(r, i, rp.Resource())
		} else {
			rp.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", i))
		}
		rp.SetSchemaUrl("https://opentelemetry.io/schemas/1.30.0")
		// Each resource draws from its own window of stacks, overlapping
		// its neighbours'.
		lo := r.IntN(max(1, sh.Stacks/2))
		for j := range sh.Scopes {
			sp := rp.ScopeProfiles().AppendEmpty()
			if sh.Scope != nil {
				sh.Scope(r, j, sp.Scope())
			} else {
				sp.Scope().SetName(fmt.Sprintf("scope-%d", j))
			}
			for k := range sh.Profiles {
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
				for range sh.Samples {
					s := p.Samples().AppendEmpty()
					s.SetStackIndex(int32(1 + (lo+r.IntN(max(1, sh.Stacks/2)))%sh.Stacks))
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

// Marshal encodes pd the way a pdata exporter does (which moves resource
// and scope attribute strings into the dictionary).
func Marshal(pd pprofile.Profiles) []byte {
	b, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
	if err != nil {
		panic(err)
	}
	return b
}

// Unmarshal reads b as the OTLP receiver does.
func Unmarshal(b []byte) (pprofile.Profiles, error) {
	req := pprofileotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		return pprofile.Profiles{}, err
	}
	return req.Profiles(), nil
}

// ResolvedSamples renders every sample of rp with everything it references
// resolved through dict: scope, profile type, function names and lines of
// its stack, attributes, link and values. Equal renderings mean equal
// profiles whatever the dictionary's layout.
func ResolvedSamples(dict pprofile.ProfilesDictionary, rp pprofile.ResourceProfiles) []string {
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
