// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"errors"
	"testing"
)

// checkItemAndResourceCount fails unless ItemAndResourceCount gives, for
// req, the items and error of ItemCount and, when valid, as many resources
// as Resources yields (which reads the top level with its own code).
func checkItemAndResourceCount(t *testing.T, req Request) {
	t.Helper()
	items, resources, err := req.ItemAndResourceCount()
	want, werr := req.ItemCount()
	if items != want || (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
		t.Fatalf("ItemAndResourceCount = %d items, %v; ItemCount = %d, %v", items, err, want, werr)
	}
	if err != nil {
		if resources != 0 {
			t.Fatalf("ItemAndResourceCount failed (%v) with %d resources, want 0", err, resources)
		}
		return
	}
	yielded := 0
	for _, err := range req.Resources() {
		if err != nil {
			t.Fatalf("Resources fails on a request ItemAndResourceCount accepts: %v", err)
		}
		yielded++
	}
	if resources != yielded {
		t.Fatalf("ItemAndResourceCount = %d resources, Resources yields %d", resources, yielded)
	}
}

func TestItemAndResourceCount(t *testing.T) {
	// Two resources without scopes around an unknown varint field, and one
	// with a scope of one span.
	b := []byte{0x0a, 0x00, 0x28, 0x01, 0x0a, 0x00, 0x0a, 0x04, 0x12, 0x02, 0x12, 0x00}
	items, resources, err := NewRequest(SignalTraces, b).ItemAndResourceCount()
	if items != 1 || resources != 3 || err != nil {
		t.Fatalf("ItemAndResourceCount = %d items, %d resources, %v; want 1, 3, nil", items, resources, err)
	}
	if _, _, err := NewRequest(Signal(9), b).ItemAndResourceCount(); !errors.Is(err, ErrUnknownSignal) {
		t.Fatalf("unknown signal: %v", err)
	}
	all := testRequests(t, "")
	for _, r := range all {
		checkItemAndResourceCount(t, NewRequest(r.sig, r.b))
	}
	// Every truncation of a few requests: malformed from every position.
	for _, sig := range signals {
		r := testRequest(t, "alloc/"+sig.String())
		for n := range len(r.b) {
			checkItemAndResourceCount(t, NewRequest(sig, r.b[:n]))
		}
	}
}

// TestCountFieldMatchesReader checks countField's loop for runs of items
// against the general reader alone (countFieldSlow): the same count and the
// same error, at the same offset, on items whose lengths take one, two and
// three varint bytes, a non-minimal length, other fields between the items,
// and every truncation and many one-byte corruptions of that message.
func TestCountFieldMatchesReader(t *testing.T) {
	item := func(tag byte, n int, lenBytes ...byte) []byte {
		b := []byte{tag}
		if lenBytes != nil {
			b = append(b, lenBytes...)
		} else {
			b = appendVarint(b, uint64(n))
		}
		return append(b, make([]byte, n)...)
	}
	var msg []byte
	for _, n := range []int{0, 1, 127, 128, 300, 16383, 16384, 5} {
		msg = append(msg, item(0x0a, n)...)
	}
	msg = append(msg, 0x10, 0x02) // Sum.aggregation_temporality between items
	msg = append(msg, item(0x0a, 0, 0x80, 0x00)...)
	msg = append(msg, item(0x0a, 3)...)
	msg = append(msg, item(0x12, 2)...) // a LEN field 2: wrong wire type for Sum
	msg = append(msg, item(0x0a, 1)...)

	check := func(b []byte) {
		t.Helper()
		for _, s := range []*schema{&schemaSum, &schemaGauge} {
			got, gerr := countField(b, s, 1)
			want, werr := countFieldSlow(b, s, 1)
			if got != want || (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
				t.Fatalf("%s of %x: countField = %d, %v; reader = %d, %v", s.name, b, got, gerr, want, werr)
			}
		}
	}
	check(msg)
	for n := range len(msg) {
		check(msg[:n])
	}
	mutated := make([]byte, len(msg))
	for i := range msg {
		for _, c := range []byte{0x00, 0x0a, 0x12, 0x7f, 0x80, 0xff} {
			copy(mutated, msg)
			mutated[i] = c
			check(mutated)
		}
	}
	// A field number the loop cannot take as a one-byte tag goes to the
	// reader alone.
	if n, err := countField([]byte{0x82, 0x01, 0x00}, &schemaSum, 16); n != 1 || err != nil {
		t.Fatalf("field 16: %d, %v", n, err)
	}
}
