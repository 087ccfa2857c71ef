// SPDX-License-Identifier: Apache-2.0

// Package roundtrip measures what one request-and-answer between two
// processes costs in CPU, over a unix socket read and written through Go's
// network poller (the way the transport talks to a sidecar) and over shared
// memory with futex wake-ups (the alternative a gateway could use instead of
// a socket). It exists to answer one question of issue 17: does replacing
// the socket by shared memory remove the cost of a sidecar round trip, or is
// that cost in waking the other process, which both need?
//
// The measurements are benchmarks (Linux only, as futexes are):
//
//	go test -run '^$' -bench . -count 5 ./benchmarks/roundtrip
//
// Each reports, besides ns/op, the CPU time both processes spent per round
// trip (cpu-ns/op), summed from the kernel's per-thread accounting.
//
// Read its figures as a ping-pong with nothing else running: in isolation
// shared memory costs several times less than the socket, but carried into
// the Collector and its sidecars (a prototype, measured end to end in
// RESULTS.md, "One round trip between two processes") it saved nothing,
// because each request still has to wake the other process.
package roundtrip
