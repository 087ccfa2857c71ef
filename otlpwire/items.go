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
	case !s.sig.Valid():
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

// readTraceID returns the last trace id field num of b, as readID reads
// it. Routing by trace reads one per item, so a well-formed message whose
// fields have one-byte tags is read by lastID's loop; anything else, and
// every error, is left to readID from the start, so that the answers and
// the errors are readID's own.
func readTraceID(b []byte, s *schema, num int32) ([16]byte, error) {
	var id [16]byte
	if at, ok := lastID(b, s, num, len(id)); ok {
		if at >= 0 {
			copy(id[:], b[at:at+len(id)])
		}
		return id, nil
	}
	if err := readID(b, s, num, id[:]); err != nil {
		return [16]byte{}, err
	}
	return id, nil
}

// lastID walks the fields of b for the last field num of size bytes and
// returns where its payload starts (-1 when there is none, or the last is
// empty, which means the zero id). ok is false when b holds anything the
// loop does not read: a tag over one byte, a length over two bytes, a long
// varint, a field s does not accept, an id of another size, or bytes past
// the end; the caller then reads b with the general reader.
func lastID(b []byte, s *schema, num int32, size int) (at int, ok bool) {
	at = -1
	pos := 0
	for pos < len(b) {
		tag := b[pos]
		f, typ := int32(tag>>3), tag&7
		if tag >= 0x80 || f == 0 || !s.accepts(f, typ) {
			return 0, false
		}
		pos++
		switch typ {
		case wireLen:
			if pos >= len(b) {
				return 0, false
			}
			l := int(b[pos])
			pos++
			if l >= 0x80 {
				if pos >= len(b) || b[pos] >= 0x80 {
					return 0, false
				}
				l = l&0x7f | int(b[pos])<<7
				pos++
			}
			if l > len(b)-pos {
				return 0, false
			}
			if f == num {
				switch l {
				case 0:
					at = -1
				case size:
					at = pos
				default:
					return 0, false
				}
			}
			pos += l
		case wireVarint:
			end := min(pos+9, len(b))
			for pos < end && b[pos] >= 0x80 {
				pos++
			}
			if pos == end {
				return 0, false
			}
			pos++
		case wireI64:
			if len(b)-pos < 8 {
				return 0, false
			}
			pos += 8
		case wireI32:
			if len(b)-pos < 4 {
				return 0, false
			}
			pos += 4
		default:
			return 0, false
		}
	}
	return at, true
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
