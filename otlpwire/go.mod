module github.com/otelcol-sdp/otelcol-sdp/otlpwire

go 1.26
