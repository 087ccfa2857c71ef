// SPDX-License-Identifier: Apache-2.0

package otlpwire

import "iter"

// Span is a view of one Span message. Accessors scan the span for their
// field (the last occurrence of a scalar wins, as in protobuf) and allocate
// nothing; byte slices alias the request.
type Span struct{ b []byte }

// NewSpan returns a view of b, the encoding of one Span message.
func NewSpan(b []byte) Span { return Span{b} }

// Bytes returns the encoded span, without tag and length.
func (s Span) Bytes() []byte { return s.b }

// TraceID returns the trace id (all zero if absent).
func (s Span) TraceID() ([16]byte, error) { return readTraceID(s.b, &schemaSpan, 1) }

// SpanID returns the span id (all zero if absent).
func (s Span) SpanID() ([8]byte, error) { return readSpanID(s.b, &schemaSpan, 2) }

// TraceState returns the W3C trace state.
func (s Span) TraceState() ([]byte, error) { return lastBytes(s.b, &schemaSpan, 3) }

// ParentSpanID returns the parent span id (all zero for a root span).
func (s Span) ParentSpanID() ([8]byte, error) { return readSpanID(s.b, &schemaSpan, 4) }

// Name returns the span name.
func (s Span) Name() ([]byte, error) { return lastBytes(s.b, &schemaSpan, 5) }

// Kind returns the SpanKind enum number (ptrace.SpanKind: 0 unspecified,
// 1 internal, 2 server, 3 client, 4 producer, 5 consumer).
func (s Span) Kind() (int32, error) {
	v, err := readUint(s.b, &schemaSpan, 6)
	return int32(v), err
}

// StartTimeUnixNano returns the start time in nanoseconds since the epoch.
func (s Span) StartTimeUnixNano() (uint64, error) { return readUint(s.b, &schemaSpan, 7) }

// EndTimeUnixNano returns the end time in nanoseconds since the epoch.
func (s Span) EndTimeUnixNano() (uint64, error) { return readUint(s.b, &schemaSpan, 8) }

// Attributes iterates over the span attributes in wire order.
func (s Span) Attributes() iter.Seq2[KeyValue, error] { return s.attrs().all() }

// Attribute returns the value of the first span attribute named key.
func (s Span) Attribute(key string) (Value, bool, error) { return s.attrs().get(key) }

func (s Span) attrs() attrList { return attrList{b: s.b, self: &schemaSpan, attrField: 9} }

// DroppedAttributesCount returns the dropped_attributes_count field.
func (s Span) DroppedAttributesCount() (uint32, error) {
	v, err := readUint(s.b, &schemaSpan, 10)
	return uint32(v), err
}

// Events iterates over the span events in wire order.
func (s Span) Events() iter.Seq2[SpanEvent, error] {
	return func(yield func(SpanEvent, error) bool) {
		eachMessage(s.b, &schemaSpan, 11, &schemaSpanEvent, func(b []byte) SpanEvent { return SpanEvent{b} }, yield)
	}
}

// DroppedEventsCount returns the dropped_events_count field.
func (s Span) DroppedEventsCount() (uint32, error) {
	v, err := readUint(s.b, &schemaSpan, 12)
	return uint32(v), err
}

// Links iterates over the span links in wire order.
func (s Span) Links() iter.Seq2[SpanLink, error] {
	return func(yield func(SpanLink, error) bool) {
		eachMessage(s.b, &schemaSpan, 13, &schemaSpanLink, func(b []byte) SpanLink { return SpanLink{b} }, yield)
	}
}

// DroppedLinksCount returns the dropped_links_count field.
func (s Span) DroppedLinksCount() (uint32, error) {
	v, err := readUint(s.b, &schemaSpan, 14)
	return uint32(v), err
}

// Status returns the span status, merged over the occurrences of the field
// as protobuf defines; a span without one has the zero SpanStatus.
func (s Span) Status() (SpanStatus, error) {
	var st SpanStatus
	rd := newSegReader(s.b, &schemaSpan, 15, &schemaStatus)
	for {
		f, ok, err := rd.next()
		if err != nil {
			return SpanStatus{}, err
		}
		if !ok {
			return st, nil
		}
		switch f.num {
		case 2:
			st.Message = f.data
		case 3:
			st.Code = int32(f.val)
		}
	}
}

// Flags returns the span flags (a fixed32 on the wire): the W3C trace flags
// in the low byte and the parent-is-remote bits above them.
func (s Span) Flags() (uint32, error) {
	v, err := readUint(s.b, &schemaSpan, 16)
	return uint32(v), err
}

// SpanStatus is a decoded Span.Status.
type SpanStatus struct {
	// Code is the StatusCode enum number (ptrace.StatusCode: 0 unset, 1 ok,
	// 2 error).
	Code int32
	// Message aliases the request.
	Message []byte
}

// SpanEvent is a view of one Span.Event message.
type SpanEvent struct{ b []byte }

// TimeUnixNano returns the event time in nanoseconds since the epoch.
func (e SpanEvent) TimeUnixNano() (uint64, error) { return readUint(e.b, &schemaSpanEvent, 1) }

// Name returns the event name.
func (e SpanEvent) Name() ([]byte, error) { return lastBytes(e.b, &schemaSpanEvent, 2) }

// Attributes iterates over the event attributes in wire order.
func (e SpanEvent) Attributes() iter.Seq2[KeyValue, error] { return e.attrs().all() }

// Attribute returns the value of the first event attribute named key.
func (e SpanEvent) Attribute(key string) (Value, bool, error) { return e.attrs().get(key) }

func (e SpanEvent) attrs() attrList { return attrList{b: e.b, self: &schemaSpanEvent, attrField: 3} }

// DroppedAttributesCount returns the dropped_attributes_count field.
func (e SpanEvent) DroppedAttributesCount() (uint32, error) {
	v, err := readUint(e.b, &schemaSpanEvent, 4)
	return uint32(v), err
}

// SpanLink is a view of one Span.Link message.
type SpanLink struct{ b []byte }

// TraceID returns the linked trace id.
func (l SpanLink) TraceID() ([16]byte, error) { return readTraceID(l.b, &schemaSpanLink, 1) }

// SpanID returns the linked span id.
func (l SpanLink) SpanID() ([8]byte, error) { return readSpanID(l.b, &schemaSpanLink, 2) }

// TraceState returns the linked span's trace state.
func (l SpanLink) TraceState() ([]byte, error) { return lastBytes(l.b, &schemaSpanLink, 3) }

// Attributes iterates over the link attributes in wire order.
func (l SpanLink) Attributes() iter.Seq2[KeyValue, error] { return l.attrs().all() }

// Attribute returns the value of the first link attribute named key.
func (l SpanLink) Attribute(key string) (Value, bool, error) { return l.attrs().get(key) }

func (l SpanLink) attrs() attrList { return attrList{b: l.b, self: &schemaSpanLink, attrField: 4} }

// DroppedAttributesCount returns the dropped_attributes_count field.
func (l SpanLink) DroppedAttributesCount() (uint32, error) {
	v, err := readUint(l.b, &schemaSpanLink, 5)
	return uint32(v), err
}

// Flags returns the link flags (a fixed32 on the wire, like Span.Flags).
func (l SpanLink) Flags() (uint32, error) {
	v, err := readUint(l.b, &schemaSpanLink, 6)
	return uint32(v), err
}
