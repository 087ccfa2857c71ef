// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// received is what the sidecars wrote in mode file, read back by span id.
type received struct {
	// Count holds how many times each span id was written.
	Count map[spanID]int
	// Records counts the records read; Invalid counts those whose payload
	// is not an OTLP traces request, with the first such problem in
	// InvalidErr.
	Records    int
	Invalid    int
	InvalidErr error
}

// readReceived reads every traces file (shard-<N>-traces.otlp) the sidecars
// wrote in dirs: records of a 4-byte little-endian length and an OTLP
// ExportTraceServiceRequest (cmd/sdp-sidecar/README.md, "File format").
// A file that does not end on a whole record fails the test: a sidecar
// must only ever leave whole records.
func readReceived(t testing.TB, dirs ...string) received {
	t.Helper()
	got := received{Count: map[spanID]int{}}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "shard-*-traces.otlp"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := got.add(b); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
		}
	}
	return got
}

func (r *received) add(b []byte) error {
	var unmarshaler ptrace.ProtoUnmarshaler
	for off := 0; off < len(b); {
		if len(b)-off < 4 {
			return fmt.Errorf("%d bytes at offset %d: not a whole record length", len(b)-off, off)
		}
		n := int(binary.LittleEndian.Uint32(b[off:]))
		if len(b)-off-4 < n {
			return fmt.Errorf("record at offset %d declares %d bytes, the file holds %d more", off, n, len(b)-off-4)
		}
		payload := b[off+4 : off+4+n]
		off += 4 + n
		r.Records++
		td, err := unmarshaler.UnmarshalTraces(payload)
		if err != nil {
			r.Invalid++
			if r.InvalidErr == nil {
				r.InvalidErr = fmt.Errorf("record %d (%d bytes): %w", r.Records, n, err)
			}
			continue
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					r.Count[spanID(span.SpanID())]++
				}
			}
		}
	}
	return nil
}

// tally compares what the client was told succeeded with what the
// sidecars received.
type tally struct {
	Sent, Acked, Received int
	// Lost are acked spans no sidecar received.
	Lost int
	// Duplicates are extra copies: a span received k times adds k-1.
	Duplicates int
	// Unacked are spans received although the client was not told they
	// succeeded (a refused or cut-off request that got through anyway).
	Unacked   int
	firstLost spanID
}

func count(res loadResult, got received) tally {
	tl := tally{Sent: res.Sent, Acked: len(res.Acked), Received: len(got.Count)}
	for id := range res.Acked {
		if got.Count[id] == 0 {
			if tl.Lost == 0 {
				tl.firstLost = id
			}
			tl.Lost++
		}
	}
	for id, n := range got.Count {
		tl.Duplicates += n - 1
		if _, ok := res.Acked[id]; !ok {
			tl.Unacked++
		}
	}
	return tl
}

func (tl tally) String() string {
	return fmt.Sprintf("sent=%d acked-to-client=%d received=%d lost=%d duplicates=%d received-unacked=%d",
		tl.Sent, tl.Acked, tl.Received, tl.Lost, tl.Duplicates, tl.Unacked)
}

// waitDelivered polls the sidecars' files until every acked span is there
// or timeout passes, and returns the last reading. It is for scenarios
// whose Collector still runs and may deliver after a reconnect backoff.
func waitDelivered(t testing.TB, res loadResult, timeout time.Duration, dirs ...string) tally {
	t.Helper()
	return waitReceived(t, res, timeout, 0, dirs...)
}

// waitSettled is waitDelivered for scenarios whose Collector is gone: what
// it wrote to the sidecars' sockets before it died may still be on its way
// into their files, so it returns once every acked span is there or the
// number of spans received has not changed for quiet (at most timeout).
func waitSettled(t testing.TB, res loadResult, dirs ...string) tally {
	t.Helper()
	return waitReceived(t, res, deliverTimeout, 2*time.Second, dirs...)
}

func waitReceived(t testing.TB, res loadResult, timeout, quiet time.Duration, dirs ...string) tally {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last, lastChange := -1, time.Now()
	for {
		tl := count(res, readReceived(t, dirs...))
		if tl.Lost == 0 || time.Now().After(deadline) {
			return tl
		}
		if tl.Received != last {
			last, lastChange = tl.Received, time.Now()
		} else if quiet > 0 && time.Since(lastChange) >= quiet {
			return tl
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkNothingLost logs the counts and fails the test if an acked span is
// missing or if the client had no request acked (the scenario proved
// nothing). why says what loss means in this scenario.
func checkNothingLost(t testing.TB, res loadResult, tl tally, why string) {
	t.Helper()
	t.Logf("load: %s", res)
	t.Logf("counts: %s", tl)
	if tl.Acked == 0 {
		t.Fatalf("no request was acked to the client: the scenario exercised nothing (%s)", res)
	}
	if tl.Lost > 0 {
		t.Errorf("%d of %d spans acked to the client never reached a sidecar (first lost span id %x): %s",
			tl.Lost, tl.Acked, tl.firstLost[:], why)
	}
}
