// SPDX-License-Identifier: Apache-2.0

package wirebench

import (
	"fmt"
	"sync"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// Signals, Encodings and FamilyShapes span the payload families of the side
// by side benchmarks: every signal, both encodings, four shapes (5x100,
// 10x100 with 10 attributes, 1x10000, 1000x1).
var (
	Signals      = []otlpwire.Signal{otlpwire.SignalTraces, otlpwire.SignalMetrics, otlpwire.SignalLogs}
	Encodings    = []Encoding{EncodingPdata, EncodingSDK}
	FamilyShapes = []Shape{
		{Resources: 5, Scopes: 1, Items: 100, Attrs: 5},
		{Resources: 10, Scopes: 1, Items: 100, Attrs: 10},
		{Resources: 1, Scopes: 1, Items: 10_000, Attrs: 5},
		{Resources: 1_000, Scopes: 1, Items: 1, Attrs: 5},
	}
)

// Cache generates each payload once per process.
type Cache struct {
	mu sync.Mutex
	m  map[string]Payload
}

// Get returns the payload of the given signal, shape and encoding,
// generating it on first use. It panics on a generation error, which only a
// bug can cause.
func (c *Cache) Get(sig otlpwire.Signal, sh Shape, enc Encoding) Payload {
	key := fmt.Sprintf("%v/%v/%+v", sig, enc, sh)
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.m[key]; ok {
		return p
	}
	p, err := Generate(sig, sh, enc)
	if err != nil {
		panic(fmt.Sprintf("wirebench: generate %s: %v", key, err))
	}
	if c.m == nil {
		c.m = make(map[string]Payload)
	}
	c.m[key] = p
	return p
}
