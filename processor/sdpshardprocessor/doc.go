// SPDX-License-Identifier: Apache-2.0

// Package sdpshardprocessor shards telemetry by resource across SDP sidecars.
//
// For each batch it marshals the OTLP request once, splits it by resource on
// the wire format, maps each resource's routing key to a shard with a jump
// consistent hash, and sends one SDP ResourceFrame per resource (or per chunk
// of a large resource) to that shard's sidecar.
package sdpshardprocessor // import "github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor"

//go:generate make -C ../.. generate-metadata
