// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"encoding/binary"
	"os"
	"strings"
	"sync"
	"testing"
)

var signals = []Signal{SignalTraces, SignalMetrics, SignalLogs}

// testdataRequest is one request of testdata/requests.bin.
type testdataRequest struct {
	name string
	sig  Signal
	b    []byte
}

// testdata/requests.bin is written by the root module's internal/wirediff
// (TestOtlpwireRequestsAreCurrent), which generates varied requests with
// pdata and hand-written encodings and checks pdata reads them as generated;
// this module has no dependency to do it itself. Records: uvarint name
// length, name, signal byte, uvarint request length, request.
var loadRequests = sync.OnceValues(func() ([]testdataRequest, error) {
	b, err := os.ReadFile("testdata/requests.bin")
	if err != nil {
		return nil, err
	}
	var out []testdataRequest
	for len(b) > 0 {
		var r testdataRequest
		var ok bool
		var name []byte
		if name, b, ok = cutRecord(b); !ok || len(b) == 0 {
			return nil, ErrMalformed
		}
		r.name, r.sig = string(name), Signal(b[0])
		if r.b, b, ok = cutRecord(b[1:]); !ok {
			return nil, ErrMalformed
		}
		out = append(out, r)
	}
	return out, nil
})

// cutRecord splits a uvarint-length-prefixed record off b.
func cutRecord(b []byte) (rec, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// testRequests returns the requests whose names start with prefix.
func testRequests(t testing.TB, prefix string) []testdataRequest {
	t.Helper()
	all, err := loadRequests()
	if err != nil {
		t.Fatalf("testdata/requests.bin: %v", err)
	}
	var out []testdataRequest
	for _, r := range all {
		if strings.HasPrefix(r.name, prefix) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		t.Fatalf("testdata/requests.bin holds no request named %s*", prefix)
	}
	return out
}

// testRequest returns the request named name.
func testRequest(t testing.TB, name string) testdataRequest {
	t.Helper()
	for _, r := range testRequests(t, name) {
		if r.name == name {
			return r
		}
	}
	t.Fatalf("testdata/requests.bin holds no request named %s", name)
	return testdataRequest{}
}
