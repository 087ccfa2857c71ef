// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"fmt"
	"iter"
)

// Part is one owner's share of a resource, produced by PartitionByTraceID.
type Part struct {
	// Owner is what the owner function returned for the items in it.
	Owner int
	// Request is a complete Export*ServiceRequest holding the resource and,
	// in each of its scopes that has items of this owner, those items. It
	// aliases the scratch and is valid only until the next iteration step.
	Request []byte
	// ItemCount is the number of spans or log records in it.
	ItemCount int
}

// PartitionScratch is the memory PartitionByTraceID reuses from one call
// to the next. The zero value is ready to use; a scratch must not be used
// by two partitions at once.
type PartitionScratch struct {
	items  []partItem
	scopes []partScope
	owners []int  // distinct owners, in the order of their first item
	order  []int  // item indexes grouped by owner, each group in item order
	counts []int  // items per owner
	starts []int  // where each owner's group starts in order, while grouping
	env    []byte // the resource's envelope: every field but its scopes
	stash  []byte // the scopes' envelopes, and metrics' and their data's by stream
	buf    []byte // the request being built
	// metrics are the metrics of a partition by stream, and streamOwner
	// its owner function.
	metrics     []partMetric
	streamOwner func(stream uint64) int
}

// partItem is one item of the resource: its field's bytes and its owner.
type partItem struct {
	start, end int // the item's field (tag, length, message) in the resource
	scope      int // index in PartitionScratch.scopes
	owner      int // index in PartitionScratch.owners
	count      int // items it counts as: 1, or a metric's data points
	// metric is, for a data point of a partition by stream, the index of
	// its metric in PartitionScratch.metrics; other partitions leave it 0.
	metric int
}

// partScope is one scope of the resource: where its envelope (every field
// but its items) is stashed.
type partScope struct {
	head, headLen int
}

// zeroTraceID is the trace id of an item that has none.
var zeroTraceID [16]byte

// PartitionByTraceID yields, for each owner of at least one of d's items,
// one standalone request holding the resource of d and that owner's items:
// spans (traces) or log records (logs), each assigned by owner(traceID).
// Items without a trace id (absent or all zero) go to noTrace, typically
// the owner of the resource itself. Parts come in the order of their
// owners' first items; within a part, scopes and items keep their order,
// and the resource and scope envelopes (attributes, schema URLs, every
// field but the items) are copied exactly, as are the items' bytes: nothing
// is re-encoded. Scopes without an item of the owner are left out of its
// part. A resource without any item is yielded whole, to noTrace, so that
// nothing is dropped.
//
// Metrics have no trace id: the iteration yields an error matching
// ErrWrongSignal. Malformed input yields an error matching ErrMalformed
// before any part. Deprecated scopes (field 1000) that pdata ignores are
// left out, as in SplitResource. With a scratch that has grown to the
// resource's size, nothing is allocated.
func PartitionByTraceID(d ResourceData, owner func(traceID [16]byte) int, noTrace int, scratch *PartitionScratch) iter.Seq2[Part, error] {
	return func(yield func(Part, error) bool) {
		var idSchema *schema
		var idField int32
		switch d.sig {
		case SignalTraces:
			idSchema, idField = &schemaSpan, 1
		case SignalLogs:
			idSchema, idField = &schemaLogRecord, 9
		default:
			yield(Part{}, fmt.Errorf("%w: %s have no trace id to partition by", ErrWrongSignal, d.sig))
			return
		}
		scopeField, total, err := d.splitLayout()
		if err != nil {
			yield(Part{}, err)
			return
		}
		if total == 0 {
			scratch.buf = AppendRequest(scratch.buf[:0], d)
			yield(Part{Owner: noTrace, Request: scratch.buf}, nil)
			return
		}
		k := itemKeyer{idSchema: idSchema, idField: idField, byTrace: owner, noTrace: noTrace}
		scratch.partition(d, scopeField, &k, yield)
	}
}

// PartitionByMetricName is PartitionByTraceID for metrics: each metric,
// with all its data points, goes to owner(name) of its name. ItemCount
// counts data points. A resource without any metric is yielded whole, to
// owner(nil). Traces and logs yield an error matching ErrWrongSignal.
func PartitionByMetricName(d ResourceData, owner func(name []byte) int, scratch *PartitionScratch) iter.Seq2[Part, error] {
	return func(yield func(Part, error) bool) {
		scopeField, ok := scratch.metricsLayout(d, "metric name", func() int { return owner(nil) }, yield)
		if !ok {
			return
		}
		k := itemKeyer{byName: owner}
		scratch.partition(d, scopeField, &k, yield)
	}
}

// metricsLayout begins a partition of metrics: it checks the signal and
// validates d, and yields d whole to whole() when it holds no metric. It
// returns the field holding d's scopes, and false when nothing is left to
// do (an error or the whole resource was yielded).
func (p *PartitionScratch) metricsLayout(d ResourceData, key string, whole func() int, yield func(Part, error) bool) (int32, bool) {
	if d.sig != SignalMetrics {
		yield(Part{}, fmt.Errorf("%w: %s have no %s to partition by", ErrWrongSignal, d.sig, key))
		return 0, false
	}
	scopeField, total, err := d.splitLayout()
	if err != nil {
		yield(Part{}, err)
		return 0, false
	}
	if total == 0 && !d.hasMetric(scopeField) {
		p.buf = AppendRequest(p.buf[:0], d)
		yield(Part{Owner: whole(), Request: p.buf}, nil)
		return 0, false
	}
	return scopeField, true
}

// hasMetric reports whether a validated metrics resource holds a metric.
func (d ResourceData) hasMetric(scopeField int32) bool {
	_, res, sc := d.sig.schemas()
	rd := newReader(d.b, res)
	for {
		f, ok, _ := rd.next()
		if !ok {
			return false
		}
		if f.num != scopeField {
			continue
		}
		srd := newReader(f.data, sc)
		for {
			g, ok, _ := srd.next()
			if !ok {
				break
			}
			if g.num == fieldItems {
				return true
			}
		}
	}
}

// itemKeyer says which owner an item goes to and what it counts as: by
// trace id (spans, log records) or by metric name.
type itemKeyer struct {
	idSchema *schema
	idField  int32
	byTrace  func([16]byte) int
	noTrace  int
	byName   func([]byte) int
}

func (k *itemKeyer) owner(item []byte) (owner, count int, err error) {
	if k.byName != nil {
		name, err := lastBytes(item, &schemaMetric, 1)
		if err != nil {
			return 0, 0, err
		}
		if count, err = countMetric(item); err != nil {
			return 0, 0, err
		}
		return k.byName(name), count, nil
	}
	id, err := readTraceID(item, k.idSchema, k.idField)
	if err != nil {
		return 0, 0, err
	}
	if id == zeroTraceID {
		return k.noTrace, 1, nil
	}
	return k.byTrace(id), 1, nil
}

// partition assigns d's items with k and yields one part per owner.
// With a nil k it partitions by stream (streamOwner).
func (p *PartitionScratch) partition(d ResourceData, scopeField int32, k *itemKeyer, yield func(Part, error) bool) {
	if err := p.assign(d, scopeField, k); err != nil {
		yield(Part{}, err)
		return
	}
	p.group()
	start := 0
	for o, n := range p.counts {
		items := p.order[start : start+n]
		start += n
		count := 0
		for _, i := range items {
			count += p.items[i].count
		}
		var req []byte
		if k == nil {
			req = p.buildStreams(d.b, scopeField, items)
		} else {
			req = p.build(d.b, scopeField, items)
		}
		if !yield(Part{Owner: p.owners[o], Request: req, ItemCount: count}, nil) {
			return
		}
	}
}

// assign walks d once, stashing the resource's envelope and each scope's,
// and recording each item with its owner: with k, each item of a scope;
// without (a partition by stream), each data point of a metric.
func (p *PartitionScratch) assign(d ResourceData, scopeField int32, k *itemKeyer) error {
	p.items, p.scopes, p.owners, p.metrics = p.items[:0], p.scopes[:0], p.owners[:0], p.metrics[:0]
	p.env, p.stash = p.env[:0], p.stash[:0]
	_, res, sc := d.sig.schemas()
	rd := newReader(d.b, res)
	for {
		f, ok, _ := rd.next() // validated by splitLayout
		if !ok {
			return nil
		}
		if f.num != scopeField {
			if !isScopeField(f.num) {
				p.env = append(p.env, d.b[f.start:f.end]...)
			}
			continue
		}
		var err error
		if k == nil {
			err = p.assignScopeStreams(f, sc)
		} else {
			err = p.assignScope(f, sc, k)
		}
		if err != nil {
			return err
		}
	}
}

// assignScope stashes the envelope of the scope in field f and records
// each of its items with the owner k gives it.
func (p *PartitionScratch) assignScope(f field, sc *schema, k *itemKeyer) error {
	head := len(p.stash)
	scope := len(p.scopes)
	base := f.end - len(f.data) // where the scope's message starts in the resource
	srd := newReader(f.data, sc)
	for {
		g, ok, _ := srd.next()
		if !ok {
			break
		}
		if g.num != fieldItems {
			p.stash = append(p.stash, f.data[g.start:g.end]...)
			continue
		}
		o, count, err := k.owner(g.data)
		if err != nil {
			return err
		}
		p.items = append(p.items, partItem{start: base + g.start, end: base + g.end, scope: scope, owner: p.ownerIndex(o), count: count})
	}
	p.scopes = append(p.scopes, partScope{head: head, headLen: len(p.stash) - head})
	return nil
}

// ownerIndex returns the index of owner o in p.owners, adding it when new.
// Owners are few (the members of a fleet), so a scan beats a map.
func (p *PartitionScratch) ownerIndex(o int) int {
	for i, have := range p.owners {
		if have == o {
			return i
		}
	}
	p.owners = append(p.owners, o)
	return len(p.owners) - 1
}

// group orders the item indexes by owner, keeping item order within each
// owner (a counting sort), so that building every part costs one pass over
// the items in all.
func (p *PartitionScratch) group() {
	p.counts, p.starts = p.counts[:0], p.starts[:0]
	for range p.owners {
		p.counts = append(p.counts, 0)
		p.starts = append(p.starts, 0)
	}
	for _, it := range p.items {
		p.counts[it.owner]++
	}
	sum := 0
	for o, n := range p.counts {
		p.starts[o] = sum
		sum += n
	}
	p.order = p.order[:0]
	for range p.items {
		p.order = append(p.order, 0)
	}
	for i, it := range p.items {
		p.order[p.starts[it.owner]] = i
		p.starts[it.owner]++
	}
}

// build writes the request of one owner's items (indexes into p.items, in
// item order) into p.buf and returns it.
func (p *PartitionScratch) build(rb []byte, scopeField int32, items []int) []byte {
	buf := append(p.buf[:0], make([]byte, reserve)...)
	buf = append(buf, p.env...)
	scopeTag := uint64(scopeField)<<3 | wireLen
	for i := 0; i < len(items); {
		sc := p.items[items[i]].scope
		j, size := i, 0
		for ; j < len(items) && p.items[items[j]].scope == sc; j++ {
			it := p.items[items[j]]
			size += it.end - it.start
		}
		head := p.scopes[sc]
		buf = appendVarint(appendVarint(buf, scopeTag), uint64(head.headLen+size))
		buf = append(buf, p.stash[head.head:head.head+head.headLen]...)
		for ; i < j; i++ {
			it := p.items[items[i]]
			buf = append(buf, rb[it.start:it.end]...)
		}
	}
	content := len(buf) - reserve
	start := reserve - 1 - sizeVarint(uint64(content))
	buf[start] = requestTag
	putVarint(buf[start+1:reserve], uint64(content))
	p.buf = buf
	return buf[start:]
}
