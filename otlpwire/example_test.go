// SPDX-License-Identifier: Apache-2.0

package otlpwire_test

import (
	"encoding/binary"
	"fmt"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// field encodes a length-delimited protobuf field holding the concatenated
// parts: enough to write the small OTLP requests of these examples without a
// protobuf library.
func field(num int, parts ...[]byte) []byte {
	var body []byte
	for _, p := range parts {
		body = append(body, p...)
	}
	b := binary.AppendUvarint(nil, uint64(num)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}

func str(num int, s string) []byte { return field(num, []byte(s)) }

// traceRequest encodes an ExportTraceServiceRequest with one resource per
// service (attribute service.name) holding spansPerService spans.
func traceRequest(spansPerService int, services ...string) []byte {
	var req []byte
	for _, svc := range services {
		serviceName := field(1, str(1, "service.name"), field(2, str(1, svc))) // KeyValue
		var spans [][]byte
		for i := range spansPerService {
			spans = append(spans, field(2, str(5, fmt.Sprintf("operation-%d", i)))) // Span{name}
		}
		// ResourceSpans{resource: Resource{attributes}, scope_spans: ScopeSpans{spans}}
		req = append(req, field(1, field(1, serviceName), field(2, spans...))...)
	}
	return req
}

// Counting the spans of a request walks its bytes once and builds nothing.
func ExampleRequest_ItemCount() {
	req := otlpwire.NewRequest(otlpwire.SignalTraces, traceRequest(3, "checkout", "cart"))
	n, err := req.ItemCount()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(n, "spans")
	// Output: 6 spans
}

// Each resource is reached without copying; attributes are looked up on the
// wire.
func ExampleRequest_Resources() {
	req := otlpwire.NewRequest(otlpwire.SignalTraces, traceRequest(2, "checkout", "cart"))
	for rd, err := range req.Resources() {
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := rd.Resource()
		if err != nil {
			fmt.Println(err)
			return
		}
		service, _, _ := res.Attribute("service.name")
		n, _ := rd.ItemCount()
		fmt.Printf("%s: %d spans\n", service.Str(), n)
	}
	// Output:
	// checkout: 2 spans
	// cart: 2 spans
}

// HashKeysWith hashes the named attributes of a resource for routing: equal
// values give equal hashes, whatever the order of the attributes on the wire.
func ExampleResource_HashKeysWith() {
	hash := func(b []byte) uint64 {
		for rd := range otlpwire.NewRequest(otlpwire.SignalTraces, b).Resources() {
			res, _ := rd.Resource()
			h, found, err := res.HashKeysWith(otlpwire.HashV2, []string{"service.name"})
			if err != nil || found != 1 {
				panic(fmt.Sprint(found, err))
			}
			return h
		}
		return 0
	}
	a, b, c := hash(traceRequest(1, "checkout")), hash(traceRequest(5, "checkout")), hash(traceRequest(1, "cart"))
	fmt.Println("same service, same hash:", a == b)
	fmt.Println("other service, other hash:", a != c)
	// Output:
	// same service, same hash: true
	// other service, other hash: true
}

// SplitResource cuts one resource into requests of at most a given size,
// each a complete request with its own item count.
func ExampleSplitResource() {
	req := otlpwire.NewRequest(otlpwire.SignalTraces, traceRequest(10, "checkout"))
	for rd := range req.Resources() {
		fmt.Println("whole:", otlpwire.RequestSize(rd), "bytes")
		for chunk, err := range otlpwire.SplitResource(rd, 120, nil) {
			if err != nil {
				fmt.Println(err)
				return
			}
			fmt.Printf("chunk: %d bytes, %d spans\n", len(chunk.Request), chunk.ItemCount)
		}
	}
	// Output:
	// whole: 186 bytes
	// chunk: 109 bytes, 5 spans
	// chunk: 109 bytes, 5 spans
}
