// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"errors"
	"iter"
)

// ErrItemTooLarge is returned by SplitResource when a single item (span, log
// record or data point), together with the resource and scope envelope it
// needs, cannot fit the size limit.
var ErrItemTooLarge = errors.New("otlpwire: item does not fit the size limit")

// requestTag is the tag of field 1 (resource_*) of an Export*ServiceRequest.
const requestTag = 0x0a

// RequestSize returns the size of the request AppendRequest(nil, d) builds.
func RequestSize(d ResourceData) int {
	n := envelopeSize(len(d.b))
	if len(d.dict) != 0 {
		n += dictionarySize(d)
	}
	return n
}

// envelopeSize is the size of a one-byte tag, a length and n bytes.
func envelopeSize(n int) int { return 1 + sizeVarint(uint64(n)) + n }

// AppendRequest appends to dst a complete Export*ServiceRequest holding d
// alone (field-1 tag, length, d.Bytes(), and for profiles the dictionary
// after it) and returns the extended slice. At most 11 bytes precede
// d.Bytes(). For traces, metrics and logs, appending several ResourceData
// to the same request (starting from its first byte) yields one request
// holding all of them, since such a request is nothing but its repeated
// field 1; for profiles it does not (each copy of the dictionary would
// shift the indices of the next): use AppendResource for each resource and
// AppendDictionary once. It allocates only when dst lacks capacity.
func AppendRequest(dst []byte, d ResourceData) []byte {
	dst = AppendResource(dst, d)
	if len(d.dict) != 0 {
		dst = AppendDictionary(dst, d)
	}
	return dst
}

// AppendResource appends to dst the request field holding d (field-1 tag,
// length, d.Bytes()) without the dictionary of a profiles resource, and
// returns the extended slice. For traces, metrics and logs it is
// AppendRequest.
func AppendResource(dst []byte, d ResourceData) []byte {
	dst = append(dst, requestTag)
	dst = appendVarint(dst, uint64(len(d.b)))
	return append(dst, d.b...)
}

// Chunk is one request produced by SplitResource.
type Chunk struct {
	// Request is a complete Export*ServiceRequest holding one resource. It
	// may alias the scratch buffer and is valid only until the next
	// iteration step.
	Request []byte
	// ItemCount is the number of spans, data points, log records or
	// profile samples in it.
	ItemCount int
}

// SplitResource yields standalone requests, each holding the resource of d
// and a share of its items, whose sizes do not exceed maxRequestBytes. If
// the whole resource fits it is yielded as is. Otherwise whole scopes are
// packed greedily into requests; a scope that does not fit alone is cut
// between its items (and, for metrics, a metric that does not fit alone is
// cut between its data points), each piece keeping the resource, scope and
// metric envelope. Item bytes are copied verbatim, never re-encoded.
//
// A profiles resource is cut between its profiles, never inside one: every
// request ends with the whole dictionary of d (so its size counts against
// the limit in every chunk), and ItemCount is the samples it holds. A
// profile that does not fit with its envelope and the dictionary yields an
// error matching ErrProfileTooLarge (and ErrItemTooLarge).
//
// Deprecated scopes (field 1000) that pdata would ignore, because the
// resource also has scopes in field 2, are not copied when splitting. If a
// single item cannot fit, the iteration yields an error matching
// ErrItemTooLarge and stops; malformed input yields an error matching
// ErrMalformed before any chunk. The request bytes are built in scratch
// (grown as needed), so with enough capacity no memory is allocated per
// chunk.
func SplitResource(d ResourceData, maxRequestBytes int, scratch []byte) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		want, total, err := d.splitLayout()
		if err != nil {
			yield(Chunk{}, err)
			return
		}
		if RequestSize(d) <= maxRequestBytes {
			yield(Chunk{Request: AppendRequest(scratch[:0], d), ItemCount: total}, nil)
			return
		}
		_, res, sc := d.sig.schemas()
		s := splitter{
			sig: d.sig, rx: d.b, res: res, scope: sc, max: maxRequestBytes,
			scopeField: want, buf: scratch, yield: yield, d: d, tail: dictionarySize(d),
		}
		s.run()
	}
}

// WholeItemCount returns the item count of the chunk SplitResource yields
// for a resource that fits whole (RequestSize(d) <= maxRequestBytes), after
// the same validation, or the error SplitResource yields instead of it. With
// it and AppendRequest a caller builds that chunk wherever it wants the bytes
// (behind a frame header, in the frame's own buffer) rather than in
// SplitResource's scratch, saving a copy.
func WholeItemCount(d ResourceData) (int, error) {
	_, total, err := d.splitLayout()
	return total, err
}

// splitLayout validates d, and returns the field holding its scopes and its
// item count, before SplitResource yields anything.
func (d ResourceData) splitLayout() (scopeField int32, items int, err error) {
	if scopeField, err = d.scopeField(); err != nil {
		return 0, 0, err
	}
	if items, err = countResource(d.sig, d.b); err != nil {
		return 0, 0, err
	}
	return scopeField, items, nil
}

// reserve leaves room in front of a chunk for the request tag and length,
// which are only known once the chunk is complete.
const reserve = 1 + 10

// splitter builds the chunks of one resource in a single pass over its
// bytes. The envelopes every chunk repeats (the resource's fields other than
// scopes, and while a scope or metric is being cut, that scope's and
// metric's fields other than items or data points) are gathered once into a
// stash at the front of buf, and each chunk copies them from there: the cost
// is linear in the resource's bytes plus the bytes written, whatever the
// number of chunks or scopes.
//
// buf layout: [stash: resource envelope | scope head | metric and data head]
// [chunk: reserve | resource envelope | scopes...].
type splitter struct {
	sig        Signal
	rx         []byte
	res, scope *schema
	max        int
	scopeField int32
	buf        []byte
	envLen     int // resource envelope: buf[:envLen]
	stash      int // end of the stash; the current chunk starts here
	base       int // start of the current chunk (its reserve)
	items      int
	nonEmpty   bool
	yielded    bool
	yield      func(Chunk, error) bool
	stopped    bool
	// d is the resource being cut; tail is the size of its dictionary,
	// which every chunk of a profiles resource ends with.
	d    ResourceData
	tail int
}

func (s *splitter) run() {
	s.buf = appendExcept(s.buf[:0], nil, s.rx, s.res, isScopeField)
	s.envLen = len(s.buf)
	s.stash = s.envLen
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

func isScopeField(n int32) bool { return n == fieldScopes || n == fieldDeprecated }
func isItemField(n int32) bool  { return n == fieldItems }
func isDataField(n int32) bool  { return dataSchema(n) != nil }
func isPointField(n int32) bool { return n == 1 }

// fits reports whether n more bytes of resource content keep the chunk
// within the limit.
func (s *splitter) fits(n int) bool {
	return envelopeSize(len(s.buf)-s.base-reserve+n)+s.tail <= s.max
}

// reset starts an empty chunk after the stash.
func (s *splitter) reset() {
	s.base = s.stash
	s.buf = append(s.buf[:s.base], make([]byte, reserve)...)
	s.buf = append(s.buf, s.buf[:s.envLen]...)
	s.items = 0
	s.nonEmpty = false
}

// extendStash appends the fields of b for which skip is false to the stash
// and returns where they start. The current chunk must be empty.
func (s *splitter) extendStash(b []byte, sch *schema, skip func(int32) bool) (start, n int) {
	start = s.stash
	s.buf = appendExcept(s.buf[:start], nil, b, sch, skip)
	s.stash = len(s.buf)
	return start, s.stash - start
}

// stashed returns n stashed bytes from start.
func (s *splitter) stashed(start, n int) []byte { return s.buf[start : start+n] }

func (s *splitter) flush() {
	content := len(s.buf) - s.base - reserve
	start := s.base + reserve - 1 - sizeVarint(uint64(content))
	s.buf[start] = requestTag
	putVarint(s.buf[start+1:s.base+reserve], uint64(content))
	if s.tail != 0 {
		s.buf = AppendDictionary(s.buf, s.d)
	}
	s.yielded = true
	if !s.yield(Chunk{Request: s.buf[start:], ItemCount: s.items}, nil) {
		s.stopped = true
		return
	}
	s.reset()
}

func (s *splitter) fail() {
	if s.sig == SignalProfiles {
		s.yield(Chunk{}, ErrProfileTooLarge)
		s.stopped = true
		return
	}
	s.yield(Chunk{}, ErrItemTooLarge)
	s.stopped = true
}

// tagLen is the size of the tag of the field holding the scopes.
func (s *splitter) tagLen() int { return sizeVarint(uint64(s.scopeField)<<3 | wireLen) }

// splitScope cuts one scope that does not fit an empty chunk between its
// items. The current chunk is empty when it is called.
func (s *splitter) splitScope(sc []byte) {
	headAt, headLen := s.extendStash(sc, s.scope, isItemField)
	defer func() { s.stash = headAt }()
	s.reset()
	scopeEntry := func(content int) int { return s.tagLen() + sizeVarint(uint64(content)) + content }
	var (
		pendStart, pendLen, pendN, pendItems int
	)
	writePending := func() {
		s.buf = appendVarint(appendVarint(s.buf, uint64(s.scopeField)<<3|wireLen), uint64(headLen+pendLen))
		s.buf = append(s.buf, s.stashed(headAt, headLen)...)
		s.buf = appendRange(s.buf, sc, pendStart, pendN, s.scope, fieldItems)
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
		switch s.sig {
		case SignalMetrics:
			n, _ = countMetric(f.data)
		case SignalProfiles:
			n, _ = countProfile(f.data)
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
		s.splitMetric(headAt, headLen, f.data)
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
// data points. Only the last data field counts, as in pdata. The scope head
// is stashed at scopeAt; the current chunk is empty when it is called.
func (s *splitter) splitMetric(scopeAt, scopeHeadLen int, m []byte) {
	var data field
	rd := newReader(m, &schemaMetric)
	for {
		f, ok, _ := rd.next()
		if !ok {
			break
		}
		if isDataField(f.num) {
			data = f
		}
	}
	if data.num == 0 {
		s.fail()
		return
	}
	ds := dataSchema(data.num)
	metricAt, metricHead := s.extendStash(m, &schemaMetric, isDataField)
	dataAt, dataHead := s.extendStash(data.data, ds, isPointField)
	defer func() { s.stash = metricAt }()
	s.reset()
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
		s.buf = append(s.buf, s.stashed(scopeAt, scopeHeadLen)...)
		s.buf = appendVarint(append(s.buf, fieldItems<<3|wireLen), uint64(ml))
		s.buf = append(s.buf, s.stashed(metricAt, metricHead)...)
		s.buf = appendVarint(appendVarint(s.buf, uint64(data.num)<<3|wireLen), uint64(dl))
		s.buf = append(s.buf, s.stashed(dataAt, dataHead)...)
		s.buf = appendRange(s.buf, data.data, pendStart, pendN, ds, 1)
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

// appendExcept appends prefix, then every field of b for which skip is
// false, verbatim and in order.
func appendExcept(dst, prefix, b []byte, sch *schema, skip func(int32) bool) []byte {
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

// appendRange appends n occurrences of field num of b, starting at offset
// start, verbatim.
func appendRange(dst, b []byte, start, n int, sch *schema, num int32) []byte {
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
