module github.com/otelcol-sdp/otelcol-sdp/benchmarks/peerwire

go 1.26.8

require (
	github.com/otelcol-sdp/otelcol-sdp v0.0.0
	github.com/otelcol-sdp/otelcol-sdp/otlpwire v0.1.0
	go.olly.garden/otlp-wire v0.0.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/hashicorp/go-version v1.9.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee // indirect
	github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatautil v0.161.0 // indirect
	go.opentelemetry.io/collector/featuregate v1.71.0 // indirect
	go.opentelemetry.io/collector/pdata v1.71.0 // indirect
	go.opentelemetry.io/proto/otlp v1.11.1 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

// The peer is not on the module proxy: make bench-peer links a checkout of it
// (OTLP_WIRE_DIR, commit f38dda7) to ./otlp-wire, which git ignores.
replace (
	github.com/otelcol-sdp/otelcol-sdp => ../..
	github.com/otelcol-sdp/otelcol-sdp/otlpwire => ../../otlpwire
	github.com/otelcol-sdp/otelcol-sdp/sdp => ../../sdp
	go.olly.garden/otlp-wire => ./otlp-wire
)
