// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/xprocessor"
)

func init() { signalCases = append(signalCases, profilesCase) }

// buildProfiles builds a profiles request whose samples each carry an
// attribute "item" naming them, through one dictionary shared by every
// resource: string 1 is "item", attribute 1+n names item n of the batch.
func buildProfiles(batch, resources, items int) (pprofile.Profiles, map[string][]string) {
	pd := pprofile.NewProfiles()
	dict := pd.Dictionary()
	dict.StringTable().Append("", "item", "cpu", "nanoseconds")
	dict.AttributeTable().AppendEmpty()
	dict.FunctionTable().AppendEmpty()
	fn := dict.FunctionTable().AppendEmpty()
	fn.SetNameStrindex(2)
	dict.LocationTable().AppendEmpty()
	dict.LocationTable().AppendEmpty().Lines().AppendEmpty().SetFunctionIndex(1)
	dict.StackTable().AppendEmpty()
	dict.StackTable().AppendEmpty().LocationIndices().Append(1)
	sent := map[string][]string{}
	for r := range resources {
		rp := pd.ResourceProfiles().AppendEmpty()
		fillResource(rp.Resource(), r)
		p := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
		p.SampleType().SetTypeStrindex(2)
		p.SampleType().SetUnitStrindex(3)
		for i := range items {
			name := itemName(batch, r, i)
			a := dict.AttributeTable().AppendEmpty()
			a.SetKeyStrindex(1)
			a.Value().SetStr(name)
			s := p.Samples().AppendEmpty()
			s.SetStackIndex(1)
			s.Values().Append(int64(i + 1))
			s.AttributeIndices().Append(int32(dict.AttributeTable().Len() - 1))
			sent[serviceName(batch, r)] = append(sent[serviceName(batch, r)], name)
		}
	}
	return pd, sent
}

func unmarshalProfiles(otlp []byte) (pprofile.Profiles, error) {
	req := pprofileotlp.NewExportRequest()
	if err := req.UnmarshalProto(otlp); err != nil {
		return pprofile.Profiles{}, err
	}
	return req.Profiles(), nil
}

var profilesCase = signalCase{
	name: "profiles",
	create: func(t *testing.T, f processor.Factory, set processor.Settings, cfg *Config) (component.Component, func() int) {
		sink := new(consumertest.ProfilesSink)
		p, err := f.(xprocessor.Factory).CreateProfiles(context.Background(), set, cfg, sink)
		require.NoError(t, err)
		return p, sink.SampleCount
	},
	consume: func(ctx context.Context, c component.Component, batch, resources, items int) (map[string][]string, error) {
		pd, sent := buildProfiles(batch, resources, items)
		return sent, c.(xprocessor.Profiles).ConsumeProfiles(ctx, pd)
	},
	decode: func(otlp []byte) (string, []string, int, error) {
		pd, err := unmarshalProfiles(otlp)
		if err != nil {
			return "", nil, 0, err
		}
		if pd.ResourceProfiles().Len() != 1 {
			return "", nil, pd.ResourceProfiles().Len(), nil
		}
		rp := pd.ResourceProfiles().At(0)
		attrs := pd.Dictionary().AttributeTable()
		var names []string
		for _, sp := range rp.ScopeProfiles().All() {
			for _, p := range sp.Profiles().All() {
				for _, s := range p.Samples().All() {
					// A sample whose attribute does not resolve is named
					// so, and fails the comparison with what was sent.
					name := "<unresolved>"
					if idx := s.AttributeIndices(); idx.Len() == 1 && int(idx.At(0)) < attrs.Len() {
						name = attrs.At(int(idx.At(0))).Value().Str()
					}
					names = append(names, name)
				}
			}
		}
		return resourceService(rp.Resource()), names, 1, nil
	},
	alone: func(t *testing.T, batch, resources, items int) map[string][]byte {
		out := map[string][]byte{}
		// A frame carries the whole request's dictionary, which marshalling
		// extended with every resource's attribute strings: each resource
		// is what the whole request reads back as, the others removed.
		pd, _ := buildProfiles(batch, resources, items)
		whole, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(pd)
		require.NoError(t, err)
		for r := range resources {
			single, err := unmarshalProfiles(whole)
			require.NoError(t, err)
			index := -1
			single.ResourceProfiles().RemoveIf(func(pprofile.ResourceProfiles) bool { index++; return index != r })
			b, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(single)
			require.NoError(t, err)
			out[itemName(batch, r, 0)] = b
		}
		return out
	},
	canonical: func(otlp []byte) ([]byte, error) {
		pd, err := unmarshalProfiles(otlp)
		if err != nil {
			return nil, err
		}
		return (&pprofile.ProtoMarshaler{}).MarshalProfiles(pd)
	},
}
