// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// Behaviour the golden vectors cannot carry: names of out-of-range enum
// values, views of an unknown signal, and strings that are not valid UTF-8
// (golden.json is JSON, which cannot hold them).

func TestStringsOfUnknownEnumValues(t *testing.T) {
	for got, want := range map[string]string{
		MetricType(9).String():      "MetricType(9)",
		NumberValueType(7).String(): "NumberValueType(7)",
		ValueKind(12).String():      "ValueKind(12)",
		Signal(0).String():          "Signal(0)",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

// Every view of a resource or scope of an unknown signal fails with
// ErrUnknownSignal, never ErrMalformed.
func TestViewsOfAnUnknownSignal(t *testing.T) {
	b := []byte{0x0a, 0x00, 0x12, 0x00}
	is := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrUnknownSignal) || errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrUnknownSignal", what, err)
		}
	}
	for _, sig := range []Signal{0, 5, 200} {
		rd := NewResourceData(sig, b)
		_, err := rd.ItemCount()
		is("ResourceData.ItemCount", err)
		_, err = rd.Resource()
		is("ResourceData.Resource", err)
		_, err = rd.SchemaURL()
		is("ResourceData.SchemaURL", err)
		_, err = WholeItemCount(rd)
		is("WholeItemCount", err)
		for _, err := range rd.Scopes() {
			is("ResourceData.Scopes", err)
		}
		for _, err := range SplitResource(rd, 1<<20, nil) {
			is("SplitResource", err)
		}
		sd := NewScopeData(sig, b)
		_, err = sd.ItemCount()
		is("ScopeData.ItemCount", err)
		_, err = sd.Scope()
		is("ScopeData.Scope", err)
		_, err = sd.SchemaURL()
		is("ScopeData.SchemaURL", err)
		n := 0
		for _, err := range sd.Spans() {
			is("ScopeData.Spans", err)
			n++
		}
		for _, err := range sd.LogRecords() {
			is("ScopeData.LogRecords", err)
			n++
		}
		for _, err := range sd.Metrics() {
			is("ScopeData.Metrics", err)
			n++
		}
		if n != 3 {
			t.Errorf("signal %d: the three item iterators yield %d times, want one error each", sig, n)
		}
	}
}

// Strings inside a slice render as encoding/json renders them with HTML
// escaping off (the package documentation's promise for Value.Text), for
// the strings JSON cannot carry in golden.json too: invalid UTF-8 becomes
// U+FFFD.
func TestTextOfStringsAsEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"plain", "bad\xffutf8", "\xc3", "trunc\xe2\x80", "\xed\xa0\x80 surrogate", "ok é \u2028 \u2029 \x00 \x1f \x7f \"\\ <&>",
	} {
		p := pb{}
		p.msg(5, func(q *pb) { q.msg(1, func(r *pb) { r.bytesAlways(1, []byte(s)) }) })
		v, err := NewValue(p.b)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode([]string{s}); err != nil {
			t.Fatal(err)
		}
		got, err := v.Text(nil)
		if err != nil || string(got) != string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
			t.Errorf("%q: Text = %s, %v; encoding/json writes %s", s, got, err, want.Bytes())
		}
	}
}

// nested returns an AnyValue holding a string inside n arrays, kvlists or
// both alternating.
func nested(n int, kind string) []byte {
	p := pb{}
	p.bytesAlways(1, []byte("x"))
	v := p.b
	for i := range n {
		q := pb{}
		if kind == "array" || (kind == "mixed" && i%2 == 0) {
			q.msg(5, func(r *pb) { r.bytesAlways(1, v) })
		} else {
			q.msg(6, func(r *pb) {
				r.msg(1, func(e *pb) { e.str(1, "k"); e.bytesAlways(2, v) })
			})
		}
		v = q.b
	}
	return v
}

// TestNestingDepthLimit: values nested 100 arrays or kvlists deep are read,
// rendered and hashed; one level more is refused with ErrUnsupported (the
// package documentation's limit), wherever the value is read.
func TestNestingDepthLimit(t *testing.T) {
	for _, kind := range []string{"array", "kvlist", "mixed"} {
		for _, n := range []int{99, 100, 101, 102} {
			b := nested(n, kind)
			refused := n > 100
			check := func(what string, err error) {
				t.Helper()
				if refused != (err != nil) || (refused && (!errors.Is(err, ErrUnsupported) || !errors.Is(err, errTooDeep))) {
					t.Fatalf("%s %d deep: %s: %v (refused above 100)", kind, n, what, err)
				}
			}
			v, err := NewValue(b)
			check("NewValue", err)
			if !refused {
				text, err := v.Text(nil)
				check("Text", err)
				if len(text) < n {
					t.Fatalf("%s %d deep: Text = %q", kind, n, text)
				}
			}
			p := pb{}
			p.msg(1, func(q *pb) { q.str(1, "deep"); q.bytesAlways(2, b) })
			res := NewResource(p.b)
			_, err = res.Hash()
			check("Hash", err)
			_, err = res.HashWith(HashV2)
			check("HashWith(HashV2)", err)
			_, _, err = res.Attribute("deep")
			check("Attribute", err)
			var last error
			for _, err := range res.Attributes() {
				last = err
			}
			check("Attributes", last)
		}
	}
}
