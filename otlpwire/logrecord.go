// SPDX-License-Identifier: Apache-2.0

package otlpwire

import "iter"

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
