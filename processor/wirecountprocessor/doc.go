// SPDX-License-Identifier: Apache-2.0

//go:generate make -C ../.. generate-metadata

// Package wirecountprocessor meters ingest per resource group: it counts
// items (spans, metric data points, log records) and encoded OTLP bytes per
// combination of configured resource attribute values and reports the counts
// as the Collector's own telemetry. It passes data through unchanged.
package wirecountprocessor // import "github.com/otelcol-sdp/otelcol-sdp/processor/wirecountprocessor"
