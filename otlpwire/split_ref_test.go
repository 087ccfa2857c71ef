// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"bytes"
	"errors"
	"iter"
	"testing"
)

// This file keeps the splitter as it was before cutting became one pass
// (commit d0f7e26): it re-walked the resource and scope for every chunk, which
// made cutting quadratic, but its output defines the chunking semantics.
// TestSplitMatchesPreviousImplementation requires the one-pass splitter to
// produce the same chunks byte for byte.

// refSplitResource yields standalone requests, each holding the resource of d
// and a share of its items, whose sizes do not exceed maxRequestBytes. If
// the whole resource fits it is yielded as is. Otherwise whole scopes are
// packed greedily into requests; a scope that does not fit alone is cut
// between its items (and, for metrics, a metric that does not fit alone is
// cut between its data points), each piece keeping the resource, scope and
// metric envelope. Item bytes are copied verbatim, never re-encoded.
//
// Deprecated scopes (field 1000) that pdata would ignore, because the
// resource also has scopes in field 2, are not copied when splitting. If a
// single item cannot fit, the iteration yields an error matching
// ErrItemTooLarge and stops; malformed input yields an error matching
// ErrMalformed before any chunk. The request bytes are built in scratch
// (grown as needed), so with enough capacity no memory is allocated per
// chunk.
func refSplitResource(d ResourceData, maxRequestBytes int, scratch []byte) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		want, err := d.scopeField()
		if err == nil {
			var total int
			total, err = countResource(d.sig, d.b)
			if err == nil && RequestSize(d) <= maxRequestBytes {
				yield(Chunk{Request: AppendRequest(scratch[:0], d), ItemCount: total}, nil)
				return
			}
		}
		if err != nil {
			yield(Chunk{}, err)
			return
		}
		_, res, sc := d.sig.schemas()
		s := refSplitter{
			sig: d.sig, rx: d.b, res: res, scope: sc, max: maxRequestBytes,
			scopeField: want, buf: scratch[:0], yield: yield,
		}
		s.run()
	}
}

// refReserve leaves room in front of a chunk for the request tag and length,
// which are only known once the chunk is complete.
const refReserve = 1 + 10

type refSplitter struct {
	sig        Signal
	rx         []byte
	res, scope *schema
	max        int
	scopeField int32
	buf        []byte
	items      int
	nonEmpty   bool
	yielded    bool
	yield      func(Chunk, error) bool
	stopped    bool
}

func (s *refSplitter) run() {
	s.reset()
	rd := newReader(s.rx, s.res)
	for !s.stopped {
		f, ok, _ := rd.next() // validated by scopeField
		if !ok {
			break
		}
		if f.num != s.scopeField {
			continue
		}
		entry := s.rx[f.start:f.end]
		if !s.fits(len(entry)) && s.nonEmpty {
			s.flush()
		}
		if s.stopped {
			return
		}
		if s.fits(len(entry)) {
			n, _ := countScope(s.sig, s.scope, f.data)
			s.buf = append(s.buf, entry...)
			s.items += n
			s.nonEmpty = true
			continue
		}
		s.splitScope(f.data)
	}
	if !s.stopped && s.nonEmpty {
		s.flush()
	}
	if !s.stopped && !s.yielded {
		// No effective scope: the resource envelope travels alone, if it fits.
		if s.fits(0) {
			s.flush()
		} else {
			s.fail()
		}
	}
}

func refIsScopeField(n int32) bool { return n == fieldScopes || n == fieldDeprecated }
func refIsItemField(n int32) bool  { return n == fieldItems }
func refIsDataField(n int32) bool  { return dataSchema(n) != nil }
func refIsPointField(n int32) bool { return n == 1 }

// fits reports whether n more bytes of resource content keep the chunk
// within the limit.
func (s *refSplitter) fits(n int) bool {
	return envelopeSize(len(s.buf)-refReserve+n) <= s.max
}

func (s *refSplitter) reset() {
	s.buf = append(s.buf[:0], make([]byte, refReserve)...)
	s.buf = refAppendExcept(s.buf, nil, s.rx, s.res, refIsScopeField)
	s.items = 0
	s.nonEmpty = false
}

func (s *refSplitter) flush() {
	content := len(s.buf) - refReserve
	start := refReserve - 1 - sizeVarint(uint64(content))
	s.buf[start] = requestTag
	putVarint(s.buf[start+1:refReserve], uint64(content))
	s.yielded = true
	if !s.yield(Chunk{Request: s.buf[start:], ItemCount: s.items}, nil) {
		s.stopped = true
		return
	}
	s.reset()
}

func (s *refSplitter) fail() {
	s.yield(Chunk{}, ErrItemTooLarge)
	s.stopped = true
}

// tagLen is the size of the tag of the field holding the scopes.
func (s *refSplitter) tagLen() int { return sizeVarint(uint64(s.scopeField)<<3 | wireLen) }

// splitScope cuts one scope that does not fit an empty chunk between its items.
func (s *refSplitter) splitScope(sc []byte) {
	headLen := refSizeExcept(sc, s.scope, refIsItemField)
	scopeEntry := func(content int) int { return s.tagLen() + sizeVarint(uint64(content)) + content }
	var (
		pendStart, pendLen, pendN, pendItems int
	)
	writePending := func() {
		s.buf = appendVarint(appendVarint(s.buf, uint64(s.scopeField)<<3|wireLen), uint64(headLen+pendLen))
		s.buf = refAppendExcept(s.buf, nil, sc, s.scope, refIsItemField)
		s.buf = refAppendRange(s.buf, sc, pendStart, pendN, s.scope, fieldItems)
		s.items += pendItems
		s.nonEmpty = true
		pendLen, pendN, pendItems = 0, 0, 0
	}
	rd := newReader(sc, s.scope)
	sawItem := false
	for !s.stopped {
		f, ok, _ := rd.next()
		if !ok {
			break
		}
		if f.num != fieldItems {
			continue
		}
		sawItem = true
		size := f.end - f.start
		n := 1
		if s.sig == SignalMetrics {
			n, _ = countMetric(f.data)
		}
		if !s.fits(scopeEntry(headLen + pendLen + size)) {
			if pendN > 0 {
				writePending()
			}
			if s.nonEmpty {
				s.flush()
			}
		}
		if s.stopped {
			return
		}
		if s.fits(scopeEntry(headLen + pendLen + size)) {
			if pendN == 0 {
				pendStart = f.start
			}
			pendLen += size
			pendN++
			pendItems += n
			continue
		}
		if s.sig != SignalMetrics {
			s.fail()
			return
		}
		s.splitMetric(sc, headLen, f.data)
	}
	if !s.stopped && pendN > 0 {
		writePending()
	}
	if !s.stopped && !sawItem {
		// A scope without items that cannot fit alone: its envelope is too large.
		s.fail()
	}
}

// splitMetric cuts one metric that does not fit an empty chunk between its
// data points. Only the last data field counts, as in pdata.
func (s *refSplitter) splitMetric(sc []byte, scopeHeadLen int, m []byte) {
	var data field
	rd := newReader(m, &schemaMetric)
	for {
		f, ok, _ := rd.next()
		if !ok {
			break
		}
		if refIsDataField(f.num) {
			data = f
		}
	}
	if data.num == 0 {
		s.fail()
		return
	}
	ds := dataSchema(data.num)
	metricHead := refSizeExcept(m, &schemaMetric, refIsDataField)
	dataHead := refSizeExcept(data.data, ds, refIsPointField)
	dataTag := sizeVarint(uint64(data.num)<<3 | wireLen)
	sizes := func(points int) (scope, metric, data int) {
		data = dataHead + points
		metric = metricHead + dataTag + sizeVarint(uint64(data)) + data
		scope = scopeHeadLen + 1 + sizeVarint(uint64(metric)) + metric
		return
	}
	scopeEntry := func(content int) int { return s.tagLen() + sizeVarint(uint64(content)) + content }
	var pendStart, pendLen, pendN int
	writePending := func() {
		sl, ml, dl := sizes(pendLen)
		s.buf = appendVarint(appendVarint(s.buf, uint64(s.scopeField)<<3|wireLen), uint64(sl))
		s.buf = refAppendExcept(s.buf, nil, sc, s.scope, refIsItemField)
		s.buf = appendVarint(append(s.buf, fieldItems<<3|wireLen), uint64(ml))
		s.buf = refAppendExcept(s.buf, nil, m, &schemaMetric, refIsDataField)
		s.buf = appendVarint(appendVarint(s.buf, uint64(data.num)<<3|wireLen), uint64(dl))
		s.buf = refAppendExcept(s.buf, nil, data.data, ds, refIsPointField)
		s.buf = refAppendRange(s.buf, data.data, pendStart, pendN, ds, 1)
		s.items += pendN
		s.nonEmpty = true
		pendLen, pendN = 0, 0
	}
	rd = newReader(data.data, ds)
	sawPoint := false
	for !s.stopped {
		f, ok, _ := rd.next()
		if !ok {
			break
		}
		if f.num != 1 {
			continue
		}
		sawPoint = true
		size := f.end - f.start
		if sl, _, _ := sizes(pendLen + size); !s.fits(scopeEntry(sl)) {
			if pendN > 0 {
				writePending()
			}
			if s.nonEmpty {
				s.flush()
			}
		}
		if s.stopped {
			return
		}
		if sl, _, _ := sizes(pendLen + size); s.fits(scopeEntry(sl)) {
			if pendN == 0 {
				pendStart = f.start
			}
			pendLen += size
			pendN++
			continue
		}
		s.fail()
		return
	}
	if !s.stopped && pendN > 0 {
		writePending()
	}
	if !s.stopped && !sawPoint {
		s.fail()
	}
}

// refSizeExcept is the total size of the fields of b for which skip is false.
func refSizeExcept(b []byte, sch *schema, skip func(int32) bool) int {
	rd := newReader(b, sch)
	n := 0
	for {
		f, ok, _ := rd.next()
		if !ok {
			return n
		}
		if !skip(f.num) {
			n += f.end - f.start
		}
	}
}

// refAppendExcept appends prefix, then every field of b for which skip is
// false, verbatim and in order.
func refAppendExcept(dst, prefix, b []byte, sch *schema, skip func(int32) bool) []byte {
	dst = append(dst, prefix...)
	rd := newReader(b, sch)
	for {
		f, ok, _ := rd.next()
		if !ok {
			return dst
		}
		if !skip(f.num) {
			dst = append(dst, b[f.start:f.end]...)
		}
	}
}

// refAppendRange appends n occurrences of field num of b, starting at offset
// start, verbatim.
func refAppendRange(dst, b []byte, start, n int, sch *schema, num int32) []byte {
	rd := reader{b: b, pos: start, s: sch}
	for n > 0 {
		f, ok, _ := rd.next()
		if !ok {
			return dst
		}
		if f.num == num {
			dst = append(dst, b[f.start:f.end]...)
			n--
		}
	}
	return dst
}

// collectChunks returns copies of the chunks of split, and the error that
// ended it.
func collectChunks(seq iter.Seq2[Chunk, error]) ([]Chunk, error) {
	var out []Chunk
	for c, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, Chunk{Request: append([]byte(nil), c.Request...), ItemCount: c.ItemCount})
	}
	return out, nil
}

func TestSplitMatchesPreviousImplementation(t *testing.T) {
	limits := []int{60, 150, 400, 1200, 4096, 1 << 20}
	compared, cut, tooLarge := 0, 0, 0
	for _, c := range testRequests(t, "case/") {
		for rd, err := range NewRequest(c.sig, c.b).Resources() {
			if err != nil {
				t.Fatal(err)
			}
			for _, limit := range limits {
				scratch := make([]byte, 0, 64)
				got, gerr := collectChunks(SplitResource(rd, limit, scratch))
				want, werr := collectChunks(refSplitResource(rd, limit, nil))
				if !errors.Is(gerr, werr) && gerr != werr {
					t.Fatalf("%s: limit %d: error %v, previously %v", c.name, limit, gerr, werr)
				}
				if len(got) != len(want) {
					t.Fatalf("%s: limit %d: %d chunks, previously %d", c.name, limit, len(got), len(want))
				}
				for i := range got {
					if !bytes.Equal(got[i].Request, want[i].Request) || got[i].ItemCount != want[i].ItemCount {
						t.Fatalf("%s: limit %d: chunk %d differs", c.name, limit, i)
					}
				}
				compared += len(got)
				if len(got) > 1 {
					cut++
				}
				if errors.Is(gerr, ErrItemTooLarge) {
					tooLarge++
				}
			}
		}
	}
	if compared == 0 || cut == 0 || tooLarge == 0 {
		t.Fatalf("%d chunks compared, %d resources cut, %d too large: the cases do not exercise cutting", compared, cut, tooLarge)
	}
}
