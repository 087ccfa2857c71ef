// SPDX-License-Identifier: Apache-2.0

// Package e2e runs the built otelcol-sdp distribution and reference sidecar:
// items sent over gRPC and HTTP for each signal must equal the items counted
// by the wirecount processor and received by the sidecars; `validate` must
// accept every example and reject bad configurations naming the component
// and field; `components` must list our components. The fault suite (tests
// named TestFault*) kills, stops and attacks the processes under load and
// checks, by unique span id, that nothing a client was told succeeded is
// lost, and that memory stays within what is configured; README.md lists
// each scenario and its expected outcome.
//
// The tests need the e2e build tag and the binaries `make test` builds:
//
//	make test          # or: make build tools && OTELCOL_SDP_BIN=... go test -tags e2e ./test/e2e
package e2e
