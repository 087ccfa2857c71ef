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
