// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"errors"
	"strings"
	"testing"
)

func TestMalformedInputs(t *testing.T) {
	span := []byte{0x2a, 0x01, 'x'} // Span{name: "x"}
	scope := append([]byte{0x12, byte(len(span))}, span...)
	resource := append([]byte{0x12, byte(len(scope))}, scope...)
	valid := append([]byte{0x0a, byte(len(resource))}, resource...)
	if n, err := NewRequest(SignalTraces, valid).ItemCount(); n != 1 || err != nil {
		t.Fatalf("valid input: %d, %v", n, err)
	}
	cases := []struct {
		name   string
		b      []byte
		reason error
		where  string
	}{
		{"truncated varint", []byte{0x0a, 0x80}, errTruncated, "ExportTraceServiceRequest at byte 0"},
		{"truncated tag", []byte{0x8a}, errTruncated, "ExportTraceServiceRequest"},
		{"overlong length", []byte{0x0a, 0x05, 0x00}, errTruncated, "(field 1)"},
		{"huge length", []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, errBadLength, "field 1"},
		{"varint overflow", []byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, errOverflow, "field 1"},
		{"wrong wire type", []byte{0x08, 0x01}, errWireType, "field 1"},
		{"wrong wire type in scope", []byte{0x0a, 0x02, 0x10, 0x01}, errWireType, "ResourceSpans"},
		{"wrong wire type field 1000", []byte{0x0a, 0x03, 0xc0, 0x3e, 0x01}, errWireType, "field 1000"},
		{"group", []byte{0x1b, 0x1c}, errGroup, "field 3"},
		{"end group", []byte{0x0c}, errGroup, "field 1"},
		{"field zero", []byte{0x02, 0x00}, errFieldZero, "ExportTraceServiceRequest"},
		{"illegal wire type", []byte{0x0f}, errBadWire, "field 1"},
		{"truncated fixed64", []byte{0x09, 0x00}, errTruncated, "field 1"},
		{"truncated fixed32", []byte{0x0d, 0x00}, errTruncated, "field 1"},
		{"truncated inside", valid[:len(valid)-1], errTruncated, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewRequest(SignalTraces, c.b).ItemCount()
			if !errors.Is(err, ErrMalformed) || !errors.Is(err, c.reason) {
				t.Fatalf("err = %v, want ErrMalformed and %v", err, c.reason)
			}
			if !strings.Contains(err.Error(), c.where) {
				t.Fatalf("err %q does not say %q", err, c.where)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Message == "" {
				t.Fatalf("err %v is not a *ParseError", err)
			}
		})
	}
}

func TestMalformedAttributes(t *testing.T) {
	// ResourceSpans{resource: Resource{attributes: KeyValue{key: "k", value: <bad>}}}
	build := func(value []byte) []byte {
		kv := append([]byte{0x0a, 0x01, 'k', 0x12, byte(len(value))}, value...)
		res := append([]byte{0x0a, byte(len(kv))}, kv...)
		rs := append([]byte{0x0a, byte(len(res))}, res...)
		return rs
	}
	for name, value := range map[string][]byte{
		"bool as LEN":        {0x12, 0x00},
		"double truncated":   {0x21, 0x00, 0x00},
		"array bad element":  {0x2a, 0x02, 0x0a, 0x05},
		"kvlist bad entry":   {0x32, 0x02, 0x0a, 0x03},
		"kvlist entry group": {0x32, 0x02, 0x0b, 0x0c},
	} {
		t.Run(name, func(t *testing.T) {
			rd := NewResourceData(SignalTraces, build(value))
			res, err := rd.Resource()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := res.Hash(); !errors.Is(err, ErrMalformed) {
				t.Fatalf("Hash err = %v", err)
			}
			_, _, err = res.Attribute("k")
			if name == "bool as LEN" || name == "double truncated" {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("Attribute err = %v", err)
				}
			}
		})
	}
}

func TestUnknownSignal(t *testing.T) {
	if _, err := NewRequest(Signal(9), nil).ItemCount(); !errors.Is(err, ErrUnknownSignal) {
		t.Fatalf("err = %v", err)
	}
	yields := 0
	for _, err := range NewRequest(0, []byte{0x0a, 0x00}).Resources() {
		yields++
		if !errors.Is(err, ErrUnknownSignal) {
			t.Fatalf("err = %v", err)
		}
	}
	if yields != 1 {
		t.Fatalf("Resources of an unknown signal yielded %d times, want one error", yields)
	}
}

func TestSignalString(t *testing.T) {
	for s, want := range map[Signal]string{SignalTraces: "traces", SignalMetrics: "metrics", SignalLogs: "logs", 7: "Signal(7)"} {
		if s.String() != want {
			t.Errorf("%d: %q", s, s.String())
		}
	}
}
