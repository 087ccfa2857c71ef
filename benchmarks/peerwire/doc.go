// SPDX-License-Identifier: Apache-2.0

// Package peerwire times otlpwire side by side with its peer library
// otlp-wire (go.olly.garden/otlp-wire) and with wirebench's hand walks, on
// wirebench's payload families: counting the items, iterating the resources
// and looking up a resource attribute, the operations both libraries have.
//
// It is a module of its own so that the root module does not depend on the
// peer, which is not on the module proxy: `make bench-peer
// OTLP_WIRE_DIR=/path/to/otlp-wire` links a checkout of it here and runs the
// benchmarks in interleaved rounds (benchmarks/RESULTS.md has the figures).
package peerwire
