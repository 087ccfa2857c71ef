// SPDX-License-Identifier: Apache-2.0

package otlpwire

import "iter"

// Request is a read-only view of the bytes of an ExportTraceServiceRequest,
// ExportMetricsServiceRequest, ExportLogsServiceRequest or
// ExportProfilesServiceRequest (equivalently TracesData, MetricsData,
// LogsData or ProfilesData, which share the layout). It never copies or
// retains anything but the slice it was given.
type Request struct {
	sig Signal
	b   []byte
}

// NewRequest returns a view of b as a request of signal sig. Nothing is
// parsed until a method is called; b must not be modified while the view
// or anything derived from it is in use.
func NewRequest(sig Signal, b []byte) Request { return Request{sig: sig, b: b} }

// Signal returns the signal the request was created with.
func (r Request) Signal() Signal { return r.sig }

// Bytes returns the request bytes.
func (r Request) Bytes() []byte { return r.b }

// ItemCount returns the number of spans, data points, log records or
// profile samples in the request: the value pdata's SpanCount,
// DataPointCount, LogRecordCount or SampleCount reports after an OTLP
// receiver has unmarshalled the same bytes. For profiles it also validates
// the top level of the dictionary and the first sample of each profile
// against the pinned layout (see ErrProfilesVersion).
func (r Request) ItemCount() (int, error) {
	items, _, err := r.ItemAndResourceCount()
	return items, err
}

// ItemAndResourceCount returns what ItemCount returns, after the same
// validation, together with the number of resources in the request (the
// number Resources yields), both from one walk over the bytes: a caller
// that needs the two does not walk the request a second time to count its
// resources. On error both counts are zero.
func (r Request) ItemAndResourceCount() (items, resources int, err error) {
	if !r.sig.Valid() {
		return 0, 0, ErrUnknownSignal
	}
	req, _, _ := r.sig.schemas()
	rd := newReader(r.b, req)
	for {
		num, err := rd.nextField()
		if err != nil {
			return 0, 0, err
		}
		if num == 0 {
			return items, resources, nil
		}
		switch {
		case num == fieldRequestEntries:
			n, err := countResource(r.sig, rd.data)
			if err != nil {
				return 0, 0, err
			}
			items += n
			resources++
		case num == fieldProfilesDictionary && r.sig == SignalProfiles:
			if err := validate(rd.data, &schemaDictionary); err != nil {
				return 0, 0, err
			}
		}
	}
}

// Resources iterates over the ResourceSpans, ResourceMetrics, ResourceLogs
// or ResourceProfiles messages of the request, in wire order. After an
// error it stops. For profiles it first finds the request's dictionary,
// wherever it lies, and validates its top level; every ResourceData it
// yields carries it.
func (r Request) Resources() iter.Seq2[ResourceData, error] {
	// The closure stays tiny so that the iterator inlines and does not escape.
	return func(yield func(ResourceData, error) bool) { r.resources(yield) }
}

func (r Request) resources(yield func(ResourceData, error) bool) {
	if !r.sig.Valid() {
		yield(ResourceData{}, ErrUnknownSignal)
		return
	}
	if r.sig == SignalProfiles {
		r.profileResources(yield)
		return
	}
	pos := 0
	for {
		// Nearly every field of a request is a resource: read its tag and
		// length inline, and leave anything else to the schema reader,
		// which is only set up when such a field or the end is reached.
		if data, next, ok := resourceEntry(r.b, pos); ok {
			pos = next
			if !yield(ResourceData{sig: r.sig, b: data}, nil) {
				return
			}
			continue
		}
		if pos == len(r.b) {
			return
		}
		req, _, _ := r.sig.schemas()
		rd := newReader(r.b, req)
		rd.pos = pos
		num, err := rd.nextField()
		if err != nil {
			yield(ResourceData{}, err)
			return
		}
		pos = rd.pos
		if num == fieldRequestEntries && !yield(ResourceData{sig: r.sig, b: rd.data}, nil) {
			return
		}
	}
}

// ResourceData is a view of one ResourceSpans, ResourceMetrics,
// ResourceLogs or ResourceProfiles message. A ResourceProfiles view also
// holds the dictionary of the request it came from, which its samples
// reference and which AppendRequest, RequestSize and SplitResource include.
type ResourceData struct {
	sig Signal
	// span: dict is the run of request fields from the first dictionary
	// field to the last (tags included), for a request holding several;
	// otherwise dict is the payload of the request's only dictionary.
	span bool
	b    []byte
	dict []byte
}

// NewResourceData returns a view of b, the encoding of one ResourceSpans,
// ResourceMetrics, ResourceLogs or ResourceProfiles message (without tag
// and length). A ResourceProfiles made this way has no dictionary; see
// NewProfilesResourceData.
func NewResourceData(sig Signal, b []byte) ResourceData { return ResourceData{sig: sig, b: b} }

// Signal returns the signal of the request the resource belongs to.
func (d ResourceData) Signal() Signal { return d.sig }

// Bytes returns the encoded message, without its tag and length. It aliases
// the request.
func (d ResourceData) Bytes() []byte { return d.b }

// ItemCount returns the number of spans, data points, log records or samples under
// this resource, counted as pdata counts them (see Request.ItemCount).
func (d ResourceData) ItemCount() (int, error) {
	if !d.sig.Valid() {
		return 0, ErrUnknownSignal
	}
	return countResource(d.sig, d.b)
}

// Resource returns the resource of the message. A message without one yields
// an empty Resource; a message carrying the field several times yields their
// merge, as protobuf (and pdata) define it.
func (d ResourceData) Resource() (Resource, error) {
	_, b, n, err := d.layout()
	if err != nil {
		return Resource{}, err
	}
	var r Resource
	if n <= 1 {
		// One occurrence (or none): the resource is that message alone.
		r = NewResource(b)
	} else {
		_, res, _ := d.sig.schemas()
		r = Resource{l: attrList{b: d.b, outer: res, container: fieldResource, self: &schemaResource,
			attrField: fieldResourceAttrs, refField: fieldEntityRefs}}
	}
	if d.sig == SignalProfiles {
		r.dict = dictRef{b: d.dict, span: d.span, on: true}
	}
	return r, nil
}

// SchemaURL returns the schema_url of the message (the last occurrence wins).
// The slice aliases the request.
func (d ResourceData) SchemaURL() ([]byte, error) {
	if !d.sig.Valid() {
		return nil, ErrUnknownSignal
	}
	_, res, _ := d.sig.schemas()
	return lastBytes(d.b, res, fieldSchemaURL)
}

// Scopes iterates over the ScopeSpans, ScopeMetrics or ScopeLogs of the
// message. Like pdata's OTLP receivers, it reads the deprecated field 1000
// (instrumentation_library_*) when, and only when, the message has no
// scope in field 2. The whole message is validated before the first yield.
func (d ResourceData) Scopes() iter.Seq2[ScopeData, error] {
	return func(yield func(ScopeData, error) bool) { d.scopes(yield) }
}

func (d ResourceData) scopes(yield func(ScopeData, error) bool) {
	want, err := d.scopeField()
	if err != nil {
		yield(ScopeData{}, err)
		return
	}
	_, res, _ := d.sig.schemas()
	rd := newReader(d.b, res)
	for {
		f, ok, _ := rd.next() // validated by scopeField
		if !ok {
			return
		}
		if f.num == want && !yield(ScopeData{sig: d.sig, b: f.data, dict: d.dict, span: d.span}, nil) {
			return
		}
	}
}

// scopeField validates the top level of the message and reports which field
// holds its effective scopes: 2, or 1000 when field 2 never occurs.
func (d ResourceData) scopeField() (int32, error) {
	scopes, _, _, err := d.layout()
	return scopes, err
}

// layout validates the fields of the message in one pass and returns the
// field that holds its scopes (see scopeField), the last occurrence of its
// resource field and how many there are.
func (d ResourceData) layout() (scopes int32, resource []byte, resources int, err error) {
	if !d.sig.Valid() {
		return 0, nil, 0, ErrUnknownSignal
	}
	scopes = fieldDeprecated
	pos := 0
	for {
		// Every known field of a ResourceX below 16 is a LEN field.
		num, data, next, ok := lenField(d.b, pos)
		if !ok {
			if pos == len(d.b) {
				return scopes, resource, resources, nil
			}
			_, res, _ := d.sig.schemas()
			rd := newReader(d.b, res)
			rd.pos = pos
			if num, err = rd.nextField(); err != nil {
				return 0, nil, 0, err
			}
			data, next = rd.data, rd.pos
		}
		switch num {
		case fieldResource:
			resource = data
			resources++
		case fieldScopes:
			scopes = fieldScopes
		case fieldSchemaURL:
		default:
			if d.sig == SignalProfiles {
				// lenField reads any LEN field; the profiles layout
				// refuses the numbers it does not define.
				rd := newReader(d.b, &schemaResourceProfiles)
				rd.pos = pos
				_, err = rd.nextField()
				return 0, nil, 0, err
			}
		}
		pos = next
	}
}

// ScopeData is a view of one ScopeSpans, ScopeMetrics, ScopeLogs or
// ScopeProfiles message. One that ResourceData.Scopes yields for a profiles
// resource holds the request's dictionary, like the ResourceData.
type ScopeData struct {
	sig  Signal
	span bool // as in ResourceData
	b    []byte
	dict []byte
}

// NewScopeData returns a view of b, the encoding of one ScopeSpans,
// ScopeMetrics, ScopeLogs or ScopeProfiles message (without tag and
// length). A ScopeProfiles made this way has no dictionary to resolve its
// scope's attributes through; ResourceData.Scopes yields ones that do.
func NewScopeData(sig Signal, b []byte) ScopeData { return ScopeData{sig: sig, b: b} }

// Signal returns the signal of the request the scope belongs to.
func (s ScopeData) Signal() Signal { return s.sig }

// Bytes returns the encoded message, without its tag and length.
func (s ScopeData) Bytes() []byte { return s.b }

// ItemCount returns the number of spans, data points, log records or samples in the
// scope, counted as pdata counts them.
func (s ScopeData) ItemCount() (int, error) {
	if !s.sig.Valid() {
		return 0, ErrUnknownSignal
	}
	_, _, sc := s.sig.schemas()
	return countScope(s.sig, sc, s.b)
}

// Scope returns the instrumentation scope (empty if absent; merged if the
// field occurs several times).
func (s ScopeData) Scope() (InstrumentationScope, error) {
	if !s.sig.Valid() {
		return InstrumentationScope{}, ErrUnknownSignal
	}
	_, _, sc := s.sig.schemas()
	if err := validate(s.b, sc); err != nil {
		return InstrumentationScope{}, err
	}
	is := InstrumentationScope{l: attrList{b: s.b, outer: sc, container: fieldScope, self: &schemaScope,
		attrField: fieldScopeAttrs}}
	if s.sig == SignalProfiles {
		is.dict = dictRef{b: s.dict, span: s.span, on: true}
	}
	return is, nil
}

// SchemaURL returns the schema_url of the message (the last occurrence wins).
func (s ScopeData) SchemaURL() ([]byte, error) {
	if !s.sig.Valid() {
		return nil, ErrUnknownSignal
	}
	_, _, sc := s.sig.schemas()
	return lastBytes(s.b, sc, fieldSchemaURL)
}

// validate checks the framing and known wire types of one message level.
func validate(b []byte, s *schema) error {
	rd := newReader(b, s)
	for {
		_, ok, err := rd.next()
		if err != nil || !ok {
			return err
		}
	}
}

// lastBytes returns the payload of the last occurrence of a LEN field.
func lastBytes(b []byte, s *schema, num int32) ([]byte, error) {
	rd := newReader(b, s)
	var v []byte
	for {
		f, ok, err := rd.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return v, nil
		}
		if f.num == num {
			v = f.data
		}
	}
}

// lastScalar returns the value of the last occurrence of a numeric field.
func lastScalar(b []byte, s *schema, num int32) (uint64, bool, error) {
	rd := newReader(b, s)
	var v uint64
	found := false
	for {
		f, ok, err := rd.next()
		if err != nil {
			return 0, false, err
		}
		if !ok {
			return v, found, nil
		}
		if f.num == num {
			v, found = f.val, true
		}
	}
}

// resourceEntry reads, at pos, a request field holding a resource when its
// tag and length are in the form lenField reads.
func resourceEntry(b []byte, pos int) (data []byte, next int, ok bool) {
	num, data, next, ok := lenField(b, pos)
	return data, next, ok && num == fieldRequestEntries
}

// lenField reads the field at pos of b without a schema when it has a
// one-byte tag with the LEN wire type and a length of at most four varint
// bytes that fits in b: the shape of nearly every message field. ok is
// false for anything else, which the schema reader then reads (and
// reports). Only messages whose known fields below 16 all have the LEN wire
// type may use it, since it checks no schema.
func lenField(b []byte, pos int) (num int32, data []byte, next int, ok bool) {
	if pos >= len(b) {
		return 0, nil, 0, false
	}
	tag := b[pos]
	if tag >= 0x80 || tag&7 != wireLen || tag < 8 {
		return 0, nil, 0, false
	}
	p := pos + 1
	n := 0
	for shift := 0; shift < 28; shift += 7 {
		if p >= len(b) {
			return 0, nil, 0, false
		}
		c := b[p]
		p++
		n |= int(c&0x7f) << shift
		if c < 0x80 {
			if n > len(b)-p {
				return 0, nil, 0, false
			}
			return int32(tag >> 3), b[p : p+n : p+n], p + n, true
		}
	}
	return 0, nil, 0, false
}
