// SPDX-License-Identifier: Apache-2.0

// Package wirestageextension runs the request-bytes stages of the project's
// processors inside the otlp receiver, before the receiver decodes a request.
//
// The extension is an HTTP and gRPC server middleware (package
// extensionmiddleware). For each OTLP protobuf export request it runs the
// stages that wirecount and sdpshard processors registered with it, in the
// configured order, on the decompressed request bytes. A diverting stage
// removes the resources it forwarded from the bytes the receiver decodes;
// the request context then carries a mark that tells the processors that
// their stage already ran on exactly that data (processor, signal, and the
// resources and items the receiver decoded), so that their pdata path does
// not count or forward it twice. A processor removes its own mark from what
// it passes on, so data a connector carries into another pipeline is
// processed there like data from any receiver. CheckConfig holds the rules
// the pipelines must follow; the wirestageconverter package runs them in
// `validate`.
package wirestageextension // import "github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"

//go:generate make -C ../.. generate-metadata
