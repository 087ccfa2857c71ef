// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"encoding/hex"
	"errors"
	"math"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// Regression inputs from issue 12's differential runs (traces requests),
// also kept as seeds in testdata/fuzz/FuzzTraces.
var (
	// Attribute k = array holding an (empty) group and the string "0".
	// pdata skips the group; otlpwire refuses groups.
	hexValueWithGroup = "0a120a100a0e0a016b12092a0743440a030a0130"
	// Attribute k: a truncated array member, then a valid bool member.
	hexMalformedMember = "0a0f0a0d0a0b0a016b12062a020a021000"
	// A truncated Resource.entity_refs, then attribute k = "v".
	hexMalformedEntityRef = "0a100a0e1a020a050a080a016b12030a0176"
)

func firstResource(t *testing.T, h string) Resource {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	for rd, err := range NewRequest(SignalTraces, b).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		res, err := rd.Resource()
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	t.Fatal("no resource")
	return Resource{}
}

func pdataAccepts(t *testing.T, h string) bool {
	t.Helper()
	b, _ := hex.DecodeString(h)
	return ptraceotlp.NewExportRequest().UnmarshalProto(b) == nil
}

// Every attribute operation validates the whole resource the way pdata
// unmarshals it: none of them returns a key, value or hash for these inputs.
func TestAttributeReadsValidateLikePdata(t *testing.T) {
	for _, tc := range []struct {
		name        string
		hex         string
		unsupported bool // pdata accepts: only the documented divergence may refuse it
	}{
		{"value holding a group", hexValueWithGroup, true},
		{"malformed member before a valid one", hexMalformedMember, false},
		{"malformed entity_refs", hexMalformedEntityRef, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pdataAccepts(t, tc.hex); got != tc.unsupported {
				t.Fatalf("pdata accepts: %v, want %v", got, tc.unsupported)
			}
			res := firstResource(t, tc.hex)
			check := func(op string, err error) {
				t.Helper()
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("%s: %v, want ErrMalformed", op, err)
				}
				if errors.Is(err, ErrUnsupported) != tc.unsupported {
					t.Fatalf("%s: %v, ErrUnsupported %v", op, err, !tc.unsupported)
				}
			}
			var iterErr error
			for kv, err := range res.Attributes() {
				if err != nil {
					iterErr = err
					break
				}
				t.Fatalf("Attributes yielded %q", kv.Key())
			}
			check("Attributes", iterErr)
			v, found, err := res.Attribute("k")
			if found || v.Kind() != ValueKindEmpty {
				t.Fatalf("Attribute(k) found %v (%v)", found, v.Kind())
			}
			check("Attribute", err)
			_, _, err = res.Attribute("absent")
			check("Attribute(absent)", err)
			h, err := res.Hash()
			if h != 0 {
				t.Fatalf("Hash = %x with an error", h)
			}
			check("Hash", err)
			_, _, err = res.HashKeys([]string{"k"})
			check("HashKeys", err)
			_, err = res.DroppedAttributesCount()
			check("DroppedAttributesCount", err)
		})
	}
}

func TestNewValueValidatesEveryMember(t *testing.T) {
	// AnyValue: a truncated array member, then bool false.
	if _, err := NewValue([]byte{0x2a, 0x02, 0x0a, 0x02, 0x10, 0x00}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("NewValue: %v", err)
	}
	// A kvlist whose entry holds a group.
	if _, err := NewValue([]byte{0x32, 0x04, 0x0a, 0x02, 0x1b, 0x1c}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("NewValue: %v", err)
	}
}

// pdata's AsString renders arrays and kvlists through encoding/json over
// AsRaw, where empty bytes are a nil slice: null, not "".
func TestTextNestedBytesLikePdata(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(pcommon.Value)
	}{
		{"kvlist empty bytes", func(v pcommon.Value) { v.SetEmptyMap().PutEmptyBytes("k") }},
		{"array empty bytes", func(v pcommon.Value) { v.SetEmptySlice().AppendEmpty().SetEmptyBytes() }},
		{"array bytes", func(v pcommon.Value) { v.SetEmptySlice().AppendEmpty().SetEmptyBytes().FromRaw([]byte{0}) }},
		{"nested empty bytes", func(v pcommon.Value) {
			v.SetEmptyMap().PutEmptySlice("s").AppendEmpty().SetEmptyMap().PutEmptyBytes("b")
		}},
		{"top-level empty bytes", func(v pcommon.Value) { v.SetEmptyBytes() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := roundTripAttribute(t, tc.set)
			v, found, err := res.Attribute("a")
			if err != nil || !found {
				t.Fatalf("Attribute: %v %v", found, err)
			}
			pv := pdataAttribute(t, tc.set)
			text, err := v.Text(nil)
			if err != nil || string(text) != pv.AsString() {
				t.Fatalf("Text = %q, %v; pdata AsString = %q", text, err, pv.AsString())
			}
		})
	}
}

// A NaN inside a kvlist has no JSON form: pdata renders "", Text says why.
func TestTextReportsUnrenderable(t *testing.T) {
	set := func(v pcommon.Value) { v.SetEmptyMap().PutDouble("x", math.NaN()) }
	res := roundTripAttribute(t, set)
	v, _, err := res.Attribute("a")
	if err != nil {
		t.Fatal(err)
	}
	text, err := v.Text([]byte("prefix"))
	if !errors.Is(err, ErrNoText) || string(text) != "prefix" {
		t.Fatalf("Text = %q, %v", text, err)
	}
	if got, want := string(v.AppendText(nil)), pdataAttribute(t, set).AsString(); got != want || got != "" {
		t.Fatalf("AppendText = %q, pdata AsString = %q", got, want)
	}
}

// roundTripAttribute marshals one resource with attribute "a" set by set
// and returns its otlpwire view.
func roundTripAttribute(t *testing.T, set func(pcommon.Value)) Resource {
	t.Helper()
	req := ptraceotlp.NewExportRequest()
	rs := req.Traces().ResourceSpans().AppendEmpty()
	set(rs.Resource().Attributes().PutEmpty("a"))
	b, err := req.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return firstResource(t, hex.EncodeToString(b))
}

// pdataAttribute returns attribute "a" as pdata's receiver reads it back.
func pdataAttribute(t *testing.T, set func(pcommon.Value)) pcommon.Value {
	t.Helper()
	req := ptraceotlp.NewExportRequest()
	set(req.Traces().ResourceSpans().AppendEmpty().Resource().Attributes().PutEmpty("a"))
	b, err := req.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	back := ptraceotlp.NewExportRequest()
	if err := back.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	v, _ := back.Traces().ResourceSpans().At(0).Resource().Attributes().Get("a")
	return v
}
