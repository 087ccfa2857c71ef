// SPDX-License-Identifier: Apache-2.0

package wirebench

import (
	"encoding/binary"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatautil"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// The operations measured, each written once per implementation so that the
// benchmarks and the agreement tests run the same code.

// WireResources iterates the resources of a request with otlpwire and
// returns how many there are and their total size.
func WireResources(sig otlpwire.Signal, b []byte) (n, size int, err error) {
	for rd, err := range otlpwire.NewRequest(sig, b).Resources() {
		if err != nil {
			return 0, 0, err
		}
		n++
		size += len(rd.Bytes())
	}
	return n, size, nil
}

// HandResources is WireResources with the hand-written walk.
func HandResources(b []byte) (n, size int, err error) {
	err = WalkResources(b, func(rx []byte) { n++; size += len(rx) })
	return n, size, err
}

// WireLookup looks key up in every resource of a request with otlpwire and
// returns the total length of the string values found and how many
// resources had the key (WalkLookup is the hand-walk reference).
func WireLookup(sig otlpwire.Signal, b []byte, key string) (total, found int, err error) {
	for rd, err := range otlpwire.NewRequest(sig, b).Resources() {
		if err != nil {
			return 0, 0, err
		}
		res, err := rd.Resource()
		if err != nil {
			return 0, 0, err
		}
		v, ok, err := res.Attribute(key)
		if err != nil {
			return 0, 0, err
		}
		if ok {
			found++
			total += len(v.Bytes())
		}
	}
	return total, found, nil
}

// WireHash returns the sum of the routing hashes (Resource.HashWith ver) of
// every resource of a request.
func WireHash(sig otlpwire.Signal, b []byte, ver otlpwire.HashVersion) (uint64, error) {
	var sum uint64
	for rd, err := range otlpwire.NewRequest(sig, b).Resources() {
		if err != nil {
			return 0, err
		}
		res, err := rd.Resource()
		if err != nil {
			return 0, err
		}
		h, err := res.HashWith(ver)
		if err != nil {
			return 0, err
		}
		sum += h
	}
	return sum, nil
}

// PdataCount unmarshals a request with pdata and counts its items, what a
// Collector pays to count.
func PdataCount(sig otlpwire.Signal, b []byte) (int, error) {
	switch sig {
	case otlpwire.SignalTraces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		return td.SpanCount(), err
	case otlpwire.SignalMetrics:
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
		return md.DataPointCount(), err
	case otlpwire.SignalLogs:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
		return ld.LogRecordCount(), err
	}
	return 0, otlpwire.ErrUnknownSignal
}

// PdataResourceAttrs unmarshals a request with pdata and returns the
// attribute maps of its resources (kept alive by the returned pdata).
func PdataResourceAttrs(sig otlpwire.Signal, b []byte) ([]pcommon.Map, error) {
	var maps []pcommon.Map
	switch sig {
	case otlpwire.SignalTraces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			return nil, err
		}
		for _, rs := range td.ResourceSpans().All() {
			maps = append(maps, rs.Resource().Attributes())
		}
	case otlpwire.SignalMetrics:
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
		if err != nil {
			return nil, err
		}
		for _, rm := range md.ResourceMetrics().All() {
			maps = append(maps, rm.Resource().Attributes())
		}
	case otlpwire.SignalLogs:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
		if err != nil {
			return nil, err
		}
		for _, rl := range ld.ResourceLogs().All() {
			maps = append(maps, rl.Resource().Attributes())
		}
	default:
		return nil, otlpwire.ErrUnknownSignal
	}
	return maps, nil
}

// PdataMapHash hashes every map with contrib's pkg/pdatautil.MapHash (the
// hash the Collector's contrib components use to key a resource's decoded
// attributes) and returns the sum of the first 8 bytes of each.
func PdataMapHash(maps []pcommon.Map) uint64 {
	var sum uint64
	for _, m := range maps {
		h := pdatautil.MapHash(m)
		sum += binary.LittleEndian.Uint64(h[:8])
	}
	return sum
}

// WireSplit appends each resource of a request as a request of its own
// (otlpwire.AppendRequest) into dst, reset per resource, and returns the
// bytes written in total.
func WireSplit(sig otlpwire.Signal, b, dst []byte) (int, []byte, error) {
	total := 0
	for rd, err := range otlpwire.NewRequest(sig, b).Resources() {
		if err != nil {
			return 0, dst, err
		}
		dst = otlpwire.AppendRequest(dst[:0], rd)
		total += len(dst)
	}
	return total, dst, nil
}

// WireCut cuts every resource of a request into requests of at most limit
// bytes with otlpwire.SplitResource and returns the number of chunks, their
// items and their bytes.
func WireCut(sig otlpwire.Signal, b []byte, limit int, scratch []byte) (chunks, items, size int, err error) {
	for rd, err := range otlpwire.NewRequest(sig, b).Resources() {
		if err != nil {
			return 0, 0, 0, err
		}
		for c, err := range otlpwire.SplitResource(rd, limit, scratch) {
			if err != nil {
				return 0, 0, 0, err
			}
			chunks++
			items += c.ItemCount
			size += len(c.Request)
		}
	}
	return chunks, items, size, nil
}
