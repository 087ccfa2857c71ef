// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// noTraceOwner is where these tests send items without a trace id; the
// others go to one of three owners by the trace id's first byte.
const noTraceOwner = 7

func partitionOwner(id [16]byte) int { return int(id[0]) % 3 }

func ownerOf(id [16]byte) int {
	if id == ([16]byte{}) {
		return noTraceOwner
	}
	return partitionOwner(id)
}

// want is pdata's idea of one resource's partition: the owners in the
// order of their first items, and per owner the request pdata marshals and
// its item count.
type want struct {
	owners []int
	parts  map[int][]byte
	items  map[int]int
}

// expectedTraces partitions resource ri of b with pdata.
func expectedTraces(t *testing.T, b []byte, ri int) want {
	t.Helper()
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	rs := req.Traces().ResourceSpans().At(ri)
	w := want{parts: map[int][]byte{}, items: map[int]int{}}
	byOwner := map[int]ptrace.ResourceSpans{}
	lastScope := map[int]int{}
	keep := ptrace.NewTraces()
	for si, ss := range rs.ScopeSpans().All() {
		for _, sp := range ss.Spans().All() {
			o := ownerOf(sp.TraceID())
			out, ok := byOwner[o]
			if !ok {
				out = ptrace.NewTraces().ResourceSpans().AppendEmpty()
				rs.Resource().CopyTo(out.Resource())
				out.SetSchemaUrl(rs.SchemaUrl())
				byOwner[o] = out
				w.owners = append(w.owners, o)
				lastScope[o] = -1
			}
			if lastScope[o] != si {
				ns := out.ScopeSpans().AppendEmpty()
				ss.Scope().CopyTo(ns.Scope())
				ns.SetSchemaUrl(ss.SchemaUrl())
				lastScope[o] = si
			}
			sp.CopyTo(out.ScopeSpans().At(out.ScopeSpans().Len() - 1).Spans().AppendEmpty())
			w.items[o]++
		}
	}
	for o, out := range byOwner {
		td := ptrace.NewTraces()
		out.CopyTo(td.ResourceSpans().AppendEmpty())
		w.parts[o], _ = ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	}
	if len(w.owners) == 0 {
		rs.CopyTo(keep.ResourceSpans().AppendEmpty())
		w.owners = []int{noTraceOwner}
		w.parts[noTraceOwner], _ = ptraceotlp.NewExportRequestFromTraces(keep).MarshalProto()
	}
	return w
}

// expectedLogs partitions resource ri of b with pdata.
func expectedLogs(t *testing.T, b []byte, ri int) want {
	t.Helper()
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	rl := req.Logs().ResourceLogs().At(ri)
	w := want{parts: map[int][]byte{}, items: map[int]int{}}
	byOwner := map[int]plog.ResourceLogs{}
	lastScope := map[int]int{}
	for si, sl := range rl.ScopeLogs().All() {
		for _, lr := range sl.LogRecords().All() {
			o := ownerOf(lr.TraceID())
			out, ok := byOwner[o]
			if !ok {
				out = plog.NewLogs().ResourceLogs().AppendEmpty()
				rl.Resource().CopyTo(out.Resource())
				out.SetSchemaUrl(rl.SchemaUrl())
				byOwner[o] = out
				w.owners = append(w.owners, o)
				lastScope[o] = -1
			}
			if lastScope[o] != si {
				ns := out.ScopeLogs().AppendEmpty()
				sl.Scope().CopyTo(ns.Scope())
				ns.SetSchemaUrl(sl.SchemaUrl())
				lastScope[o] = si
			}
			lr.CopyTo(out.ScopeLogs().At(out.ScopeLogs().Len() - 1).LogRecords().AppendEmpty())
			w.items[o]++
		}
	}
	for o, out := range byOwner {
		ld := plog.NewLogs()
		out.CopyTo(ld.ResourceLogs().AppendEmpty())
		w.parts[o], _ = plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	}
	if len(w.owners) == 0 {
		ld := plog.NewLogs()
		rl.CopyTo(ld.ResourceLogs().AppendEmpty())
		w.owners = []int{noTraceOwner}
		w.parts[noTraceOwner], _ = plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	}
	return w
}

// remarshal is what pdata makes of a request: decoded and encoded again.
func remarshal(t *testing.T, sig Signal, b []byte) []byte {
	t.Helper()
	var out []byte
	var err error
	switch sig {
	case SignalTraces:
		req := ptraceotlp.NewExportRequest()
		if err = req.UnmarshalProto(b); err == nil {
			out, err = req.MarshalProto()
		}
	default:
		req := plogotlp.NewExportRequest()
		if err = req.UnmarshalProto(b); err == nil {
			out, err = req.MarshalProto()
		}
	}
	if err != nil {
		t.Fatalf("pdata rejects a part: %v", err)
	}
	return out
}

// Partitioning by trace id against pdata, on pdata- and SDK-ordered
// encodings (deprecated scopes, decoys, reversed attributes, unpacked
// fields): every part holds the resource and, per scope, exactly its
// owner's items, with envelopes equal to pdata's; owners come in the order
// of their first items; counts are exact.
func TestDifferentialPartitionByTraceID(t *testing.T) {
	forEachCase(t, 3, func(t *testing.T, sig Signal, _ encoding, b []byte, _ decoded, _ []byte) {
		var scratch PartitionScratch
		ri := 0
		for rd, err := range NewRequest(sig, b).Resources() {
			if err != nil {
				t.Fatal(err)
			}
			parts := PartitionByTraceID(rd, partitionOwner, noTraceOwner, &scratch)
			if sig == SignalMetrics {
				for _, err := range parts {
					if !errors.Is(err, ErrWrongSignal) {
						t.Fatalf("metrics: %v, want ErrWrongSignal", err)
					}
				}
				continue
			}
			var w want
			if sig == SignalTraces {
				w = expectedTraces(t, b, ri)
			} else {
				w = expectedLogs(t, b, ri)
			}
			var owners []int
			for p, err := range parts {
				if err != nil {
					t.Fatal(err)
				}
				owners = append(owners, p.Owner)
				if got := remarshal(t, sig, p.Request); !bytes.Equal(got, w.parts[p.Owner]) {
					t.Fatalf("resource %d, owner %d: the part differs from pdata's", ri, p.Owner)
				}
				if p.ItemCount != w.items[p.Owner] {
					t.Fatalf("resource %d, owner %d: ItemCount %d, pdata %d", ri, p.Owner, p.ItemCount, w.items[p.Owner])
				}
				if n, err := NewRequest(sig, p.Request).ItemCount(); err != nil || n != p.ItemCount {
					t.Fatalf("resource %d, owner %d: the part counts %d (%v), ItemCount %d", ri, p.Owner, n, err, p.ItemCount)
				}
			}
			if !slices.Equal(owners, w.owners) {
				t.Fatalf("resource %d: owners %v, pdata %v", ri, owners, w.owners)
			}
			ri++
		}
	})
}

// metricOwner spreads metrics over three owners by the last byte of their
// name (generated names end in their index).
func metricOwner(name []byte) int {
	if len(name) == 0 {
		return 5
	}
	return int(name[len(name)-1]) % 3
}

// expectedMetrics partitions resource ri of b by metric name with pdata.
func expectedMetrics(t *testing.T, b []byte, ri int) want {
	t.Helper()
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	rm := req.Metrics().ResourceMetrics().At(ri)
	w := want{parts: map[int][]byte{}, items: map[int]int{}}
	byOwner := map[int]pmetric.ResourceMetrics{}
	lastScope := map[int]int{}
	for si, sm := range rm.ScopeMetrics().All() {
		for _, m := range sm.Metrics().All() {
			o := metricOwner([]byte(m.Name()))
			out, ok := byOwner[o]
			if !ok {
				out = pmetric.NewMetrics().ResourceMetrics().AppendEmpty()
				rm.Resource().CopyTo(out.Resource())
				out.SetSchemaUrl(rm.SchemaUrl())
				byOwner[o] = out
				w.owners = append(w.owners, o)
				lastScope[o] = -1
			}
			if lastScope[o] != si {
				ns := out.ScopeMetrics().AppendEmpty()
				sm.Scope().CopyTo(ns.Scope())
				ns.SetSchemaUrl(sm.SchemaUrl())
				lastScope[o] = si
			}
			m.CopyTo(out.ScopeMetrics().At(out.ScopeMetrics().Len() - 1).Metrics().AppendEmpty())
			w.items[o] += metricPoints(m)
		}
	}
	for o, out := range byOwner {
		md := pmetric.NewMetrics()
		out.CopyTo(md.ResourceMetrics().AppendEmpty())
		w.parts[o], _ = pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	}
	if len(w.owners) == 0 {
		md := pmetric.NewMetrics()
		rm.CopyTo(md.ResourceMetrics().AppendEmpty())
		o := metricOwner(nil)
		w.owners = []int{o}
		w.parts[o], _ = pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	}
	return w
}

// Partitioning metrics by name against pdata, on every shape and encoding.
func TestDifferentialPartitionByMetricName(t *testing.T) {
	forEachCase(t, 3, func(t *testing.T, sig Signal, _ encoding, b []byte, _ decoded, _ []byte) {
		var scratch PartitionScratch
		ri := 0
		for rd, err := range NewRequest(sig, b).Resources() {
			if err != nil {
				t.Fatal(err)
			}
			parts := PartitionByMetricName(rd, metricOwner, &scratch)
			if sig != SignalMetrics {
				for _, err := range parts {
					if !errors.Is(err, ErrWrongSignal) {
						t.Fatalf("%v: %v, want ErrWrongSignal", sig, err)
					}
				}
				continue
			}
			w := expectedMetrics(t, b, ri)
			var owners []int
			for p, err := range parts {
				if err != nil {
					t.Fatal(err)
				}
				owners = append(owners, p.Owner)
				req := pmetricotlp.NewExportRequest()
				if err := req.UnmarshalProto(p.Request); err != nil {
					t.Fatalf("pdata rejects a part: %v", err)
				}
				got, _ := req.MarshalProto()
				if !bytes.Equal(got, w.parts[p.Owner]) {
					t.Fatalf("resource %d, owner %d: the part differs from pdata's", ri, p.Owner)
				}
				if p.ItemCount != w.items[p.Owner] {
					t.Fatalf("resource %d, owner %d: ItemCount %d, pdata %d", ri, p.Owner, p.ItemCount, w.items[p.Owner])
				}
			}
			if !slices.Equal(owners, w.owners) {
				t.Fatalf("resource %d: owners %v, pdata %v", ri, owners, w.owners)
			}
			ri++
		}
	})
}
