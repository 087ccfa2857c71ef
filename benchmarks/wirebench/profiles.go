// SPDX-License-Identifier: Apache-2.0

package wirebench

import (
	"fmt"
	"math/rand/v2"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

// ProfShape sizes a CPU profiles request as a host-wide profiler sends it:
// Resources processes, each with one profile of Samples samples, whose
// stacks (Depth frames at most) come from one dictionary of Stacks stacks
// over Functions functions. Each process has its own stacks, whose frames
// are its own code for the most part and, one frame in three, code every
// process shares (the first fifth of the locations: libc, the runtime).
type ProfShape struct {
	Resources, Samples, Stacks, Depth, Functions int
}

// ProfScale is the shape of the profiles size sweep at scale s: samples,
// stacks and functions all grow with s, so the request (dictionary and
// samples alike) grows linearly.
func ProfScale(s int) ProfShape {
	return ProfShape{Resources: 4, Samples: 500 * s, Stacks: 250 * s, Depth: 32, Functions: 200 * s}
}

// GenProfiles builds the request of shape sh as pdata's marshaller writes
// it (resource attributes moved into the dictionary).
func GenProfiles(sh ProfShape) []byte {
	r := rand.New(rand.NewPCG(uint64(sh.Samples), 7))
	pd := pprofile.NewProfiles()
	dict := pd.Dictionary()
	strs := dict.StringTable()
	strs.Append("")
	str := func(s string) int32 { strs.Append(s); return int32(strs.Len() - 1) }
	dict.MappingTable().AppendEmpty()
	dict.MappingTable().AppendEmpty().SetFilenameStrindex(str("/usr/bin/server"))
	dict.FunctionTable().AppendEmpty()
	for i := range sh.Functions {
		f := dict.FunctionTable().AppendEmpty()
		f.SetNameStrindex(str(fmt.Sprintf("github.com/example/pkg%d.(*T).Method%d", i%23, i)))
		f.SetFilenameStrindex(str(fmt.Sprintf("pkg%d/file%d.go", i%23, i%50)))
	}
	dict.LocationTable().AppendEmpty()
	for i := range 2 * sh.Functions {
		loc := dict.LocationTable().AppendEmpty()
		loc.SetMappingIndex(1)
		loc.SetAddress(uint64(0x401000 + 8*i))
		ln := loc.Lines().AppendEmpty()
		ln.SetFunctionIndex(int32(1 + i%sh.Functions))
		ln.SetLine(int64(1 + r.IntN(900)))
	}
	dict.StackTable().AppendEmpty()
	locs := 2 * sh.Functions
	shared := locs / 5
	band := (locs - shared) / sh.Resources
	for k := range sh.Stacks {
		proc := k * sh.Resources / sh.Stacks
		st := dict.StackTable().AppendEmpty()
		for range 4 + r.IntN(sh.Depth-3) {
			loc := shared + proc*band + r.IntN(band)
			if r.IntN(3) == 0 {
				loc = r.IntN(shared)
			}
			st.LocationIndices().Append(int32(1 + loc))
		}
	}
	dict.AttributeTable().AppendEmpty()
	a := dict.AttributeTable().AppendEmpty()
	a.SetKeyStrindex(str("thread.name"))
	a.Value().SetStr("worker")
	cpu, ns := str("cpu"), str("nanoseconds")
	for i := range sh.Resources {
		rp := pd.ResourceProfiles().AppendEmpty()
		putAttrs(rp.Resource().Attributes(), 8, i, fmt.Sprintf("svc-%d", i), "host")
		sp := rp.ScopeProfiles().AppendEmpty()
		sp.Scope().SetName("ebpf-profiler")
		p := sp.Profiles().AppendEmpty()
		p.SampleType().SetTypeStrindex(cpu)
		p.SampleType().SetUnitStrindex(ns)
		p.SetTime(pcommon.Timestamp(1_700_000_000_000_000_000))
		for range sh.Samples {
			s := p.Samples().AppendEmpty()
			s.SetStackIndex(int32(1 + i*sh.Stacks/sh.Resources + r.IntN(sh.Stacks/sh.Resources)))
			s.Values().Append(int64(1 + r.IntN(3)))
			if r.IntN(4) == 0 {
				s.AttributeIndices().Append(1)
			}
		}
	}
	b, err := pprofileotlp.NewExportRequestFromProfiles(pd).MarshalProto()
	if err != nil {
		panic(err)
	}
	return b
}

// PdataProfilesCount unmarshals a profiles request as the OTLP receiver
// does and counts its samples.
func PdataProfilesCount(b []byte) (int, error) {
	req := pprofileotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		return 0, err
	}
	return req.Profiles().SampleCount(), nil
}

// PdataProfilesSplit builds with pdata one request per resource, each with
// the whole dictionary (what a pdata-based router must do), and returns
// their total size.
func PdataProfilesSplit(b []byte) (int, error) {
	pd, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(b)
	if err != nil {
		return 0, err
	}
	size := 0
	for _, rp := range pd.ResourceProfiles().All() {
		one := pprofile.NewProfiles()
		pd.Dictionary().CopyTo(one.Dictionary())
		rp.CopyTo(one.ResourceProfiles().AppendEmpty())
		out, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(one)
		if err != nil {
			return 0, err
		}
		size += len(out)
	}
	return size, nil
}

// WireProfilesSplit builds one request per resource with AppendRequest
// (pruned false: the whole dictionary) or AppendRequestPruned, into dst,
// and returns their total size.
func WireProfilesSplit(b, dst []byte, pruned bool, scratch *otlpwire.PruneScratch) (int, []byte, error) {
	size := 0
	for rd, err := range otlpwire.NewRequest(otlpwire.SignalProfiles, b).Resources() {
		if err != nil {
			return 0, dst, err
		}
		if pruned {
			if dst, err = otlpwire.AppendRequestPruned(dst[:0], rd, scratch); err != nil {
				return 0, dst, err
			}
		} else {
			dst = otlpwire.AppendRequest(dst[:0], rd)
		}
		size += len(dst)
	}
	return size, dst, nil
}
