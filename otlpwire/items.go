// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"encoding/binary"
	"errors"
	"iter"
	"math"
)

// ErrWrongSignal is yielded by ScopeData.Spans, Metrics and LogRecords when
// the scope belongs to another signal. It does not match ErrMalformed: the
// bytes may be fine, the call is not.
var ErrWrongSignal = errors.New("otlpwire: operation does not apply to this signal")

// Reasons specific to item contents; like the others they are wrapped in a
// *ParseError matching ErrMalformed.
var (
	errIDLength     = errors.New("trace or span id has the wrong length")
	errPackedLength = errors.New("packed fixed64 field length is not a multiple of 8")
)

// Schemas of the messages below the items that the walkers above never enter.
var (
	schemaSpanEvent = schema{name: "Span.Event", known: [17]uint8{1: expI64, 2: expLen, 3: expLen, 4: expVarint}}
	schemaSpanLink  = schema{name: "Span.Link", known: [17]uint8{1: expLen, 2: expLen, 3: expLen, 4: expLen,
		5: expVarint, 6: expI32}}
	schemaStatus   = schema{name: "Status", known: [17]uint8{2: expLen, 3: expVarint}}
	schemaExemplar = schema{name: "Exemplar", known: [17]uint8{2: expI64, 3: expI64, 4: expLen, 5: expLen,
		6: expI64, 7: expLen}}
	schemaBuckets         = schema{name: "ExponentialHistogramDataPoint.Buckets", known: [17]uint8{1: expVarint, 2: expPackedVarint}}
	schemaValueAtQuantile = schema{name: "SummaryDataPoint.ValueAtQuantile", known: [17]uint8{1: expI64, 2: expI64}}
)

// Spans iterates over the spans of a ScopeSpans in wire order. Each span's
// top level (framing and the wire types of its known fields) is validated
// before it is yielded; after an error the iteration stops. On a scope of
// another signal it yields ErrWrongSignal.
func (s ScopeData) Spans() iter.Seq2[Span, error] {
	return func(yield func(Span, error) bool) {
		eachItem(s, SignalTraces, &schemaSpan, func(b []byte) Span { return Span{b} }, yield)
	}
}

// Metrics iterates over the metrics of a ScopeMetrics, like Spans.
func (s ScopeData) Metrics() iter.Seq2[Metric, error] {
	return func(yield func(Metric, error) bool) {
		eachItem(s, SignalMetrics, &schemaMetric, func(b []byte) Metric { return Metric{b} }, yield)
	}
}

// LogRecords iterates over the log records of a ScopeLogs, like Spans.
func (s ScopeData) LogRecords() iter.Seq2[LogRecord, error] {
	return func(yield func(LogRecord, error) bool) {
		eachItem(s, SignalLogs, &schemaLogRecord, func(b []byte) LogRecord { return LogRecord{b} }, yield)
	}
}

func eachItem[T any](s ScopeData, sig Signal, item *schema, wrap func([]byte) T, yield func(T, error) bool) {
	var zero T
	switch {
	case !s.sig.valid():
		yield(zero, ErrUnknownSignal)
		return
	case s.sig != sig:
		yield(zero, ErrWrongSignal)
		return
	}
	_, _, sc := sig.schemas()
	eachMessage(s.b, sc, fieldItems, item, wrap, yield)
}

// eachMessage yields every occurrence of the message field num of b (read
// with schema s), each validated at its top level against inner first.
func eachMessage[T any](b []byte, s *schema, num int32, inner *schema, wrap func([]byte) T, yield func(T, error) bool) {
	var zero T
	rd := newReader(b, s)
	for {
		f, ok, err := rd.next()
		if err != nil {
			yield(zero, err)
			return
		}
		if !ok {
			return
		}
		if f.num != num {
			continue
		}
		if err := validate(f.data, inner); err != nil {
			yield(zero, err)
			return
		}
		if !yield(wrap(f.data), nil) {
			return
		}
	}
}

// readID copies the last occurrence of the id field num into dst. Like
// pdata, an empty field means the zero id and any length other than len(dst)
// is an error.
func readID(b []byte, s *schema, num int32, dst []byte) error {
	rd := newReader(b, s)
	for {
		f, ok, err := rd.next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if f.num != num {
			continue
		}
		switch len(f.data) {
		case 0:
			clear(dst)
		case len(dst):
			copy(dst, f.data)
		default:
			return malformed(s.name, f.start, num, errIDLength)
		}
	}
}

func readTraceID(b []byte, s *schema, num int32) ([16]byte, error) {
	var id [16]byte
	if err := readID(b, s, num, id[:]); err != nil {
		return [16]byte{}, err
	}
	return id, nil
}

func readSpanID(b []byte, s *schema, num int32) ([8]byte, error) {
	var id [8]byte
	if err := readID(b, s, num, id[:]); err != nil {
		return [8]byte{}, err
	}
	return id, nil
}

// readOptional returns the last value of a numeric field and whether it
// occurs at all (proto3 "optional" fields such as a histogram's sum).
func readOptional(b []byte, s *schema, num int32) (float64, bool, error) {
	v, ok, err := lastScalar(b, s, num)
	return math.Float64frombits(v), ok, err
}

// readDouble returns the last value of a double field, 0 if absent.
func readDouble(b []byte, s *schema, num int32) (float64, error) {
	v, _, err := lastScalar(b, s, num)
	return math.Float64frombits(v), err
}

// readUint returns the last value of a numeric field, 0 if absent.
func readUint(b []byte, s *schema, num int32) (uint64, error) {
	v, _, err := lastScalar(b, s, num)
	return v, err
}

// eachFixed64 yields the elements of a repeated fixed64 or double field as
// pdata reads them: unpacked elements append, while a packed occurrence
// replaces every element before it (pdata allocates a fresh slice for it).
// Producers write one packed occurrence, for which both rules agree. The
// message is validated before the first element is yielded.
func eachFixed64(b []byte, s *schema, num int32, yield func(uint64, error) bool) {
	rd := newReader(b, s)
	from := 0
	for {
		f, ok, err := rd.next()
		if err != nil {
			yield(0, err)
			return
		}
		if !ok {
			break
		}
		if f.num == num && f.typ == wireLen {
			if len(f.data)%8 != 0 {
				yield(0, malformed(s.name, f.start, num, errPackedLength))
				return
			}
			from = f.start
		}
	}
	rd = reader{b: b, pos: from, s: s}
	for {
		f, ok, _ := rd.next() // validated above
		if !ok {
			return
		}
		if f.num != num {
			continue
		}
		if f.typ != wireLen {
			if !yield(f.val, nil) {
				return
			}
			continue
		}
		for i := 0; i < len(f.data); i += 8 {
			if !yield(binary.LittleEndian.Uint64(f.data[i:]), nil) {
				return
			}
		}
	}
}

func eachDouble(b []byte, s *schema, num int32) iter.Seq2[float64, error] {
	return func(yield func(float64, error) bool) {
		eachFixed64(b, s, num, func(v uint64, err error) bool { return yield(math.Float64frombits(v), err) })
	}
}

func eachUint64(b []byte, s *schema, num int32) iter.Seq2[uint64, error] {
	return func(yield func(uint64, error) bool) { eachFixed64(b, s, num, yield) }
}

// mergedValue decodes a singular AnyValue field (a log body) that may occur
// several times; occurrences merge as in KeyValue.Value, and each is
// validated completely, as pdata's unmarshaler does.
func mergedValue(b []byte, s *schema, num int32) (Value, error) {
	var v Value
	rd := newReader(b, s)
	for {
		f, ok, err := rd.next()
		if err != nil {
			return Value{}, err
		}
		if !ok {
			return v, nil
		}
		if f.num == num {
			if err := v.mergeChecked(f.data, 0); err != nil {
				return Value{}, err
			}
		}
	}
}

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

// LogRecord is a view of one LogRecord message. Accessors behave as Span's.
type LogRecord struct{ b []byte }

// NewLogRecord returns a view of b, the encoding of one LogRecord message.
func NewLogRecord(b []byte) LogRecord { return LogRecord{b} }

// Bytes returns the encoded log record, without tag and length.
func (r LogRecord) Bytes() []byte { return r.b }

// TimeUnixNano returns the event time in nanoseconds since the epoch.
func (r LogRecord) TimeUnixNano() (uint64, error) { return readUint(r.b, &schemaLogRecord, 1) }

// SeverityNumber returns the SeverityNumber enum number (plog.SeverityNumber,
// 0 unspecified, 1 to 24 TRACE to FATAL4).
func (r LogRecord) SeverityNumber() (int32, error) {
	v, err := readUint(r.b, &schemaLogRecord, 2)
	return int32(v), err
}

// SeverityText returns the severity text.
func (r LogRecord) SeverityText() ([]byte, error) { return lastBytes(r.b, &schemaLogRecord, 3) }

// Body returns the log body; occurrences of the field merge as in
// KeyValue.Value, and a record without a body has an empty Value.
func (r LogRecord) Body() (Value, error) { return mergedValue(r.b, &schemaLogRecord, 5) }

// Attributes iterates over the log record attributes in wire order.
func (r LogRecord) Attributes() iter.Seq2[KeyValue, error] { return r.attrs().all() }

// Attribute returns the value of the first log record attribute named key.
func (r LogRecord) Attribute(key string) (Value, bool, error) { return r.attrs().get(key) }

func (r LogRecord) attrs() attrList { return attrList{b: r.b, self: &schemaLogRecord, attrField: 6} }

// DroppedAttributesCount returns the dropped_attributes_count field.
func (r LogRecord) DroppedAttributesCount() (uint32, error) {
	v, err := readUint(r.b, &schemaLogRecord, 7)
	return uint32(v), err
}

// Flags returns the log record flags (a fixed32 on the wire; the low byte
// holds the W3C trace flags).
func (r LogRecord) Flags() (uint32, error) {
	v, err := readUint(r.b, &schemaLogRecord, 8)
	return uint32(v), err
}

// TraceID returns the trace id of the record (all zero if absent).
func (r LogRecord) TraceID() ([16]byte, error) { return readTraceID(r.b, &schemaLogRecord, 9) }

// SpanID returns the span id of the record (all zero if absent).
func (r LogRecord) SpanID() ([8]byte, error) { return readSpanID(r.b, &schemaLogRecord, 10) }

// ObservedTimeUnixNano returns the time the record was observed, in
// nanoseconds since the epoch.
func (r LogRecord) ObservedTimeUnixNano() (uint64, error) {
	return readUint(r.b, &schemaLogRecord, 11)
}

// EventName returns the event name of the record.
func (r LogRecord) EventName() ([]byte, error) { return lastBytes(r.b, &schemaLogRecord, 12) }
