module github.com/otelcol-sdp/otelcol-sdp/sdp

go 1.26

require go.uber.org/goleak v1.3.0
