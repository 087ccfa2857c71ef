// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"testing"

	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

var update = flag.Bool("update", false, "rewrite otlpwire's testdata/requests.bin from the generators")

// requestsFile holds generated requests for otlpwire's own tests, which
// cannot generate them: otlpwire's module has no dependency, and the
// generators here build the data with pdata. Each record is a name, the
// signal and the request:
//
//	uvarint len(name) | name | signal (1 byte) | uvarint len(request) | request
//
// Names: "case/<signal>/seed<n>/shape<n>/<encoding>" for every case of
// forEachCase with 2 seeds (the split comparison), "alloc/<signal>" and
// "items/<signal>" (the allocation pins), "cut/traces" (cutting into many
// chunks).
const requestsFile = "../../otlpwire/testdata/requests.bin"

// TestOtlpwireRequestsAreCurrent fails when requestsFile is not what the
// generators produce; `go test -run TestOtlpwireRequestsAreCurrent -update`
// rewrites it.
func TestOtlpwireRequestsAreCurrent(t *testing.T) {
	var out []byte
	add := func(name string, sig Signal, b []byte) {
		out = binary.AppendUvarint(out, uint64(len(name)))
		out = append(out, name...)
		out = append(out, byte(sig))
		out = binary.AppendUvarint(out, uint64(len(b)))
		out = append(out, b...)
	}
	cases := 0
	forEachCase(t, 2, func(t *testing.T, sig Signal, _ encoding, b []byte, _ decoded, _ []byte) {
		add("case/"+t.Name()[len("TestOtlpwireRequestsAreCurrent/"):], sig, b)
		cases++
	})
	if cases == 0 {
		t.Fatal("no case generated")
	}
	for _, sig := range signals {
		add(fmt.Sprintf("alloc/%v", sig), sig, genBatch(sig, 5, shape{resources: 3, scopes: 2, items: 5, attrs: 8}).b)
		add(fmt.Sprintf("items/%v", sig), sig, genBatch(sig, 7, shape{resources: 2, scopes: 2, items: 6, attrs: 4}).b)
	}
	add("cut/traces", SignalTraces, genBatch(SignalTraces, 1, shape{resources: 3, scopes: 2, items: 30, attrs: 4}).b)
	if *update {
		if err := os.WriteFile(requestsFile, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := os.ReadFile(requestsFile)
	if err != nil {
		t.Fatalf("%v (go test -run TestOtlpwireRequestsAreCurrent -update writes it)", err)
	}
	if !bytes.Equal(committed, out) {
		t.Fatalf("%s differs from what the generators produce; rewrite it with -update", requestsFile)
	}
}
