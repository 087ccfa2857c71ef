// Package wirestageextension runs the request-bytes stages of the project's
// processors inside the otlp receiver, before the receiver decodes a request.
//
// The extension is an HTTP and gRPC server middleware (package
// extensionmiddleware). For each OTLP protobuf export request it runs the
// stages that wirecount and sdpshard processors registered with it, in the
// configured order, on the decompressed request bytes. A diverting stage
// removes the resources it forwarded from the bytes the receiver decodes;
// the request context then carries a marker that tells the processors that
// their stage already ran, so that their pdata path does not count or
// forward the same data twice.
package wirestageextension // import "github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"

//go:generate make -C ../.. generate-metadata
