// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"iter"
	"math/bits"
)

// partMetric is one metric of a partition by stream: its envelope (every
// field but its data), the tag of its data field and the data's envelope
// (every field but its points), stashed.
type partMetric struct {
	head, headLen         int
	dataTag               uint64
	dataHead, dataHeadLen int
	whole                 bool // no data points: the metric travels whole
}

// PartitionByStream is PartitionByTraceID for metrics, one data point at a
// time: each point goes to owner(stream) of its stream, a hash of its
// scope's name and version, its metric's name and its attributes (as
// Resource.HashWith hashes a resource's: HashV2, order-independent). The
// stream identifies a series within the resource; fold the resource's
// identity into it (in owner) to identify it across resources. Each part
// holds the resource, and in each scope each metric with its owner's points,
// the metric and data envelopes (description, unit, temporality, ...)
// copied exactly. A metric without data points goes whole to the owner of
// its stream with no attributes. ItemCount counts data points. Traces and
// logs yield an error matching ErrWrongSignal.
func PartitionByStream(d ResourceData, owner func(stream uint64) int, scratch *PartitionScratch) iter.Seq2[Part, error] {
	return func(yield func(Part, error) bool) {
		scopeField, ok := scratch.metricsLayout(d, "metric streams", func() int { return owner(0) }, yield)
		if !ok {
			return
		}
		scratch.streamOwner = owner
		scratch.partition(d, scopeField, nil, yield)
	}
}

// pointAttrs returns, for a data field, the schema of its points and the
// field of their attributes.
func pointAttrs(dataNum int32) (*schema, int32) {
	switch dataNum {
	case 9:
		return &schemaHistogramDataPoint, 9
	case 10:
		return &schemaExpHistogramDataPoint, 1
	case 11:
		return &schemaSummaryDataPoint, 7
	default: // gauge, sum
		return &schemaNumberDataPoint, 7
	}
}

// streamHash folds the hashes of a stream's parts.
func streamHash(scope, name, attrs uint64) uint64 {
	return mix64(scope ^ bits.RotateLeft64(name, 21) ^ bits.RotateLeft64(attrs, 42))
}

// assignScopeStreams stashes the envelope of the scope in field f and
// records each data point of its metrics with the owner of its stream.
func (p *PartitionScratch) assignScopeStreams(f field, sc *schema) error {
	head := len(p.stash)
	scope := len(p.scopes)
	base := f.end - len(f.data)
	var scopeHash uint64
	srd := newReader(f.data, sc)
	for {
		g, ok, _ := srd.next()
		if !ok {
			break
		}
		if g.num == 1 { // InstrumentationScope: name and version
			name, err := lastBytes(g.data, &schemaScope, 1)
			if err != nil {
				return err
			}
			version, err := lastBytes(g.data, &schemaScope, 2)
			if err != nil {
				return err
			}
			scopeHash = fnvBytes(fnvBytes(fnvOffset, name)^bits.RotateLeft64(fnvOffset, 7), version)
		}
		if g.num != fieldItems {
			p.stash = append(p.stash, f.data[g.start:g.end]...)
		}
	}
	p.scopes = append(p.scopes, partScope{head: head, headLen: len(p.stash) - head})
	srd = newReader(f.data, sc)
	for {
		g, ok, _ := srd.next()
		if !ok {
			return nil
		}
		if g.num != fieldItems {
			continue
		}
		if err := p.assignMetric(g, base, scope, scopeHash); err != nil {
			return err
		}
	}
}

// assignMetric records one metric and its points; g is the metric's field
// in its scope, whose message starts at base in the resource.
func (p *PartitionScratch) assignMetric(g field, base, scope int, scopeHash uint64) error {
	name, err := lastBytes(g.data, &schemaMetric, 1)
	if err != nil {
		return err
	}
	nameHash := fnvBytes(fnvOffset, name)
	var m partMetric
	var data field
	mrd := newReader(g.data, &schemaMetric)
	m.head = len(p.stash)
	for {
		h, ok, _ := mrd.next()
		if !ok {
			break
		}
		if isDataField(h.num) {
			data = h
			continue
		}
		p.stash = append(p.stash, g.data[h.start:h.end]...)
	}
	m.headLen = len(p.stash) - m.head
	hasPoints := false
	pointSchema, attrField := pointAttrs(data.num)
	if data.num != 0 {
		m.dataTag = uint64(data.num)<<3 | wireLen
		m.dataHead = len(p.stash)
		drd := newReader(data.data, dataSchema(data.num))
		for {
			h, ok, _ := drd.next()
			if !ok {
				break
			}
			if h.num == 1 {
				hasPoints = true
				continue
			}
			p.stash = append(p.stash, data.data[h.start:h.end]...)
		}
		m.dataHeadLen = len(p.stash) - m.dataHead
	}
	metric := len(p.metrics)
	if !hasPoints {
		// Nothing to split: the metric goes whole (with every data field
		// it has, as it came) to the stream without attributes.
		m.whole = true
		p.metrics = append(p.metrics, m)
		o := p.streamOwner(streamHash(scopeHash, nameHash, finishHash(0, 0)))
		p.items = append(p.items, partItem{start: base + g.start, end: base + g.end, scope: scope, owner: p.ownerIndex(o), metric: metric})
		return nil
	}
	p.metrics = append(p.metrics, m)
	dataBase := base + g.end - len(g.data) + data.end - len(data.data)
	drd := newReader(data.data, dataSchema(data.num))
	for {
		h, ok, _ := drd.next()
		if !ok {
			return nil
		}
		if h.num != 1 {
			continue
		}
		attrs, err := attrList{b: h.data, self: pointSchema, attrField: attrField}.hash(HashV2)
		if err != nil {
			return err
		}
		o := p.streamOwner(streamHash(scopeHash, nameHash, attrs))
		p.items = append(p.items, partItem{start: dataBase + h.start, end: dataBase + h.end, scope: scope, owner: p.ownerIndex(o), count: 1, metric: metric})
	}
}

// buildStreams writes the request of one owner's data points (indexes into
// p.items, in item order) into p.buf and returns it.
func (p *PartitionScratch) buildStreams(rb []byte, scopeField int32, items []int) []byte {
	buf := append(p.buf[:0], make([]byte, reserve)...)
	buf = append(buf, p.env...)
	scopeTag := uint64(scopeField)<<3 | wireLen
	for i := 0; i < len(items); {
		sc := p.items[items[i]].scope
		j := i
		for j < len(items) && p.items[items[j]].scope == sc {
			j++
		}
		head := p.scopes[sc]
		size := head.headLen
		for k := i; k < j; {
			n, next := p.metricEntry(rb, items, k, j)
			size += n
			k = next
		}
		buf = appendVarint(appendVarint(buf, scopeTag), uint64(size))
		buf = append(buf, p.stash[head.head:head.head+head.headLen]...)
		for i < j {
			buf, i = p.appendMetric(buf, rb, items, i, j)
		}
	}
	content := len(buf) - reserve
	start := reserve - 1 - sizeVarint(uint64(content))
	buf[start] = requestTag
	putVarint(buf[start+1:reserve], uint64(content))
	p.buf = buf
	return buf[start:]
}

// metricRun returns the end of the run of items[k:end] of the same metric,
// and the size of their data's content (envelope and points).
func (p *PartitionScratch) metricRun(items []int, k, end int) (next, data int) {
	mi := p.items[items[k]].metric
	m := p.metrics[mi]
	data = m.dataHeadLen
	for next = k; next < end && p.items[items[next]].metric == mi; next++ {
		it := p.items[items[next]]
		data += it.end - it.start
	}
	return next, data
}

// metricEntry returns the size of the metric entry (tag, length, message)
// that the run of items starting at k makes, and where the run ends.
func (p *PartitionScratch) metricEntry(rb []byte, items []int, k, end int) (size, next int) {
	m := p.metrics[p.items[items[k]].metric]
	if m.whole {
		it := p.items[items[k]]
		return it.end - it.start, k + 1
	}
	next, data := p.metricRun(items, k, end)
	msg := m.headLen + sizeVarint(m.dataTag) + sizeVarint(uint64(data)) + data
	return sizeVarint(uint64(fieldItems)<<3|wireLen) + sizeVarint(uint64(msg)) + msg, next
}

// appendMetric appends the metric entry of the run of items starting at k
// and returns where the run ends.
func (p *PartitionScratch) appendMetric(buf, rb []byte, items []int, k, end int) ([]byte, int) {
	m := p.metrics[p.items[items[k]].metric]
	if m.whole {
		it := p.items[items[k]]
		return append(buf, rb[it.start:it.end]...), k + 1
	}
	next, data := p.metricRun(items, k, end)
	msg := m.headLen + sizeVarint(m.dataTag) + sizeVarint(uint64(data)) + data
	buf = appendVarint(appendVarint(buf, uint64(fieldItems)<<3|wireLen), uint64(msg))
	buf = append(buf, p.stash[m.head:m.head+m.headLen]...)
	buf = appendVarint(appendVarint(buf, m.dataTag), uint64(data))
	buf = append(buf, p.stash[m.dataHead:m.dataHead+m.dataHeadLen]...)
	for ; k < next; k++ {
		it := p.items[items[k]]
		buf = append(buf, rb[it.start:it.end]...)
	}
	return buf, next
}
