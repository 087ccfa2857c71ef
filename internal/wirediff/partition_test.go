// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"bytes"
	"errors"
	"iter"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
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

// pdataPartition is pdata's partition of one resource, built from
// accessors of one signal's types: R is a resource's ResourceX, S a
// ScopeX, I an item (a span, log record or metric). Owners come in the
// order of their first items; each owner's part holds the resource's
// envelope and, per scope that has any of its items, the scope's envelope
// with those items. A resource without items goes whole to whole's owner.
type pdataPartition[R, S, I any] struct {
	scopes  func() []S
	items   func(S) []I
	owner   func(I) int
	count   func(I) int
	newPart func() R             // a resource envelope with no scope
	addTo   func(R, S)           // appends S's envelope to R
	addItem func(R, I)           // appends the item to R's last scope
	marshal func(R) []byte       // the one-resource request of R
	whole   func() (int, []byte) // the owner and request of the whole resource
}

func (pp pdataPartition[R, S, I]) want() want {
	w := want{parts: map[int][]byte{}, items: map[int]int{}}
	byOwner := map[int]R{}
	lastScope := map[int]int{}
	for si, sc := range pp.scopes() {
		for _, it := range pp.items(sc) {
			o := pp.owner(it)
			out, ok := byOwner[o]
			if !ok {
				out = pp.newPart()
				byOwner[o] = out
				w.owners = append(w.owners, o)
				lastScope[o] = -1
			}
			if lastScope[o] != si {
				pp.addTo(out, sc)
				lastScope[o] = si
			}
			pp.addItem(out, it)
			w.items[o] += pp.count(it)
		}
	}
	for o, out := range byOwner {
		w.parts[o] = pp.marshal(out)
	}
	if len(w.owners) == 0 {
		o, b := pp.whole()
		w.owners = []int{o}
		w.parts[o] = b
	}
	return w
}

// expectedTraces partitions resource ri of b by trace id with pdata.
func expectedTraces(t *testing.T, b []byte, ri int) want {
	t.Helper()
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	rs := req.Traces().ResourceSpans().At(ri)
	marshal := func(r ptrace.ResourceSpans) []byte {
		td := ptrace.NewTraces()
		r.CopyTo(td.ResourceSpans().AppendEmpty())
		out, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		return out
	}
	return pdataPartition[ptrace.ResourceSpans, ptrace.ScopeSpans, ptrace.Span]{
		scopes: func() []ptrace.ScopeSpans { return slices.Collect(valuesOf(rs.ScopeSpans().All())) },
		items:  func(ss ptrace.ScopeSpans) []ptrace.Span { return slices.Collect(valuesOf(ss.Spans().All())) },
		owner:  func(sp ptrace.Span) int { return ownerOf(sp.TraceID()) },
		count:  func(ptrace.Span) int { return 1 },
		newPart: func() ptrace.ResourceSpans {
			out := ptrace.NewTraces().ResourceSpans().AppendEmpty()
			rs.Resource().CopyTo(out.Resource())
			out.SetSchemaUrl(rs.SchemaUrl())
			return out
		},
		addTo: func(out ptrace.ResourceSpans, ss ptrace.ScopeSpans) {
			ns := out.ScopeSpans().AppendEmpty()
			ss.Scope().CopyTo(ns.Scope())
			ns.SetSchemaUrl(ss.SchemaUrl())
		},
		addItem: func(out ptrace.ResourceSpans, sp ptrace.Span) {
			sp.CopyTo(out.ScopeSpans().At(out.ScopeSpans().Len() - 1).Spans().AppendEmpty())
		},
		marshal: marshal,
		whole:   func() (int, []byte) { return noTraceOwner, marshal(rs) },
	}.want()
}

// expectedLogs partitions resource ri of b by trace id with pdata.
func expectedLogs(t *testing.T, b []byte, ri int) want {
	t.Helper()
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	rl := req.Logs().ResourceLogs().At(ri)
	marshal := func(r plog.ResourceLogs) []byte {
		ld := plog.NewLogs()
		r.CopyTo(ld.ResourceLogs().AppendEmpty())
		out, _ := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
		return out
	}
	return pdataPartition[plog.ResourceLogs, plog.ScopeLogs, plog.LogRecord]{
		scopes: func() []plog.ScopeLogs { return slices.Collect(valuesOf(rl.ScopeLogs().All())) },
		items:  func(sl plog.ScopeLogs) []plog.LogRecord { return slices.Collect(valuesOf(sl.LogRecords().All())) },
		owner:  func(lr plog.LogRecord) int { return ownerOf(lr.TraceID()) },
		count:  func(plog.LogRecord) int { return 1 },
		newPart: func() plog.ResourceLogs {
			out := plog.NewLogs().ResourceLogs().AppendEmpty()
			rl.Resource().CopyTo(out.Resource())
			out.SetSchemaUrl(rl.SchemaUrl())
			return out
		},
		addTo: func(out plog.ResourceLogs, sl plog.ScopeLogs) {
			ns := out.ScopeLogs().AppendEmpty()
			sl.Scope().CopyTo(ns.Scope())
			ns.SetSchemaUrl(sl.SchemaUrl())
		},
		addItem: func(out plog.ResourceLogs, lr plog.LogRecord) {
			lr.CopyTo(out.ScopeLogs().At(out.ScopeLogs().Len() - 1).LogRecords().AppendEmpty())
		},
		marshal: marshal,
		whole:   func() (int, []byte) { return noTraceOwner, marshal(rl) },
	}.want()
}

// valuesOf drops the indexes of a pdata slice's All.
func valuesOf[V any](all iter.Seq2[int, V]) iter.Seq[V] {
	return func(yield func(V) bool) {
		for _, v := range all {
			if !yield(v) {
				return
			}
		}
	}
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
