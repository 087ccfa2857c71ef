// SPDX-License-Identifier: Apache-2.0

// Package wirebench measures otlpwire side by side with hand-written
// reference walks of each operation and with pdata, on identical payloads.
//
// The non-test code generates the payloads (Generate: the same content
// marshalled by pdata, or re-encoded by protobuf-go as the Go SDK's OTLP
// exporters do) and holds the hand-written reference walks (WalkCount,
// WalkResources, WalkLookup) and the operations each benchmark times, so
// that the tests can check that every implementation gives the same answer
// before the benchmarks compare their costs. `make bench` runs the
// benchmarks in interleaved rounds; see benchmarks/README.md.
package wirebench
