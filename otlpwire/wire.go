// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Protobuf wire types.
const (
	wireVarint     = 0
	wireI64        = 1
	wireLen        = 2
	wireStartGroup = 3
	wireEndGroup   = 4
	wireI32        = 5
)

// ErrMalformed is matched (with errors.Is) by every error that reports bytes
// that are not a well-formed OTLP message.
var ErrMalformed = errors.New("otlpwire: malformed protobuf")

// ErrUnsupported is matched (with errors.Is), together with ErrMalformed, by
// the errors reporting input that pdata accepts but otlpwire refuses by
// design: protobuf groups (wire types 3 and 4), which proto3 producers never
// emit, and attribute values nested more than 100 arrays or kvlists deep.
var ErrUnsupported = errors.New("otlpwire: unsupported protobuf input")

// Reasons a message is malformed. They are kept unexported so that callers
// depend only on ErrMalformed, while tests can tell the causes apart.
var (
	errTruncated  = errors.New("unexpected end of data")
	errOverflow   = errors.New("varint overflows 64 bits")
	errFieldZero  = errors.New("field number is not positive")
	errWireType   = errors.New("wrong wire type")
	errBadWire    = errors.New("illegal wire type")
	errGroup      = errors.New("groups are not supported")
	errBadLength  = errors.New("negative length")
	errTooDeep    = errors.New("values nested too deeply")
	errWrongKind  = errors.New("wrong signal for this operation")
	errEmptyLimit = errors.New("limit too small")
)

// ParseError describes where a message failed to parse. It matches
// ErrMalformed with errors.Is.
type ParseError struct {
	// Message is the protobuf message being read, e.g. "ScopeSpans".
	Message string
	// Offset is the byte offset of the failing field inside that message.
	Offset int
	// Field is the field number being read, or 0 if the tag itself failed.
	Field  int32
	reason error
}

// Error implements error.
func (e *ParseError) Error() string {
	if v, ok := e.reason.(*versionReason); ok {
		return "otlpwire: profiles of another proto version: " + e.Message + " at byte " +
			strconv.Itoa(e.Offset) + ": " + v.Error()
	}
	s := "otlpwire: malformed " + e.Message + " at byte " + strconv.Itoa(e.Offset)
	if e.Field != 0 {
		s += " (field " + strconv.Itoa(int(e.Field)) + ")"
	}
	return s + ": " + e.reason.Error()
}

// Unwrap lets errors.Is match both ErrMalformed and the specific reason.
// Groups and deep nesting also match ErrUnsupported. A field of the
// profiles layout with a wire type the pinned version does not give it
// matches ErrProfilesVersion too; a field number that version does not
// define (which pdata would skip) matches ErrProfilesVersion and not
// ErrMalformed.
func (e *ParseError) Unwrap() []error {
	if v, ok := e.reason.(*versionReason); ok {
		if v.expected == expRefused {
			return []error{ErrProfilesVersion, v}
		}
		return []error{ErrMalformed, ErrProfilesVersion, errWireType, v}
	}
	if e.reason == errGroup || e.reason == errTooDeep {
		return []error{ErrMalformed, ErrUnsupported, e.reason}
	}
	return []error{ErrMalformed, e.reason}
}

func malformed(msg string, off int, field int32, reason error) error {
	return &ParseError{Message: msg, Offset: off, Field: field, reason: reason}
}

// field is one decoded protobuf field. For LEN fields data holds the payload;
// for numeric fields val holds the raw value. start and end delimit the whole
// field (tag included) inside the message, so it can be copied verbatim.
type field struct {
	num        int32
	typ        uint8
	val        uint64
	data       []byte
	start, end int
}

// reader walks the fields of one protobuf message. It accepts exactly the
// framing that pdata's generated unmarshalers accept, except groups, which it
// rejects (OTLP is proto3 and no conforming producer emits them).
//
// The hot paths call nextField, which returns only the field number and
// leaves the rest of the field in the reader, so nothing larger than a
// register travels per field; next wraps it for the colder callers.
type reader struct {
	b     []byte
	pos   int
	s     *schema
	start int    // offset of the current field's tag
	typ   uint8  // wire type of the current field
	val   uint64 // value of the current numeric field
	data  []byte // payload of the current LEN field
}

func newReader(b []byte, s *schema) reader { return reader{b: b, s: s} }

// consumeVarint decodes a varint the way pdata does: at most ten bytes, the
// excess bits of the tenth byte ignored.
func consumeVarint(b []byte, pos int) (uint64, int, error) {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, pos, errOverflow
		}
		if pos >= len(b) {
			return 0, pos, errTruncated
		}
		c := b[pos]
		pos++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, pos, nil
		}
	}
}

// nextField reads the next field and returns its number, or 0 at the end of
// the message. A LEN field's payload is left in r.data, a numeric field's
// value in r.val, the field's first byte at r.start and its end at r.pos.
func (r *reader) nextField() (int32, error) {
	b, pos := r.b, r.pos
	if pos >= len(b) {
		return 0, nil
	}
	start := pos
	r.start = start
	tag := uint64(b[pos])
	pos++
	if tag >= 0x80 {
		var err error
		if tag, pos, err = consumeVarint(b, start); err != nil {
			return 0, r.fail(start, 0, err)
		}
	}
	// pdata keeps the low 32 bits of the field number; match it so that
	// inputs pdata accepts are read the same way.
	num := int32(tag >> 3)
	if num <= 0 {
		return 0, r.fail(start, 0, errFieldZero)
	}
	typ := uint8(tag & 7)
	var err error
	switch typ {
	case wireLen:
		var n uint64
		if pos < len(b) && b[pos] < 0x80 {
			n = uint64(b[pos])
			pos++
		} else if n, pos, err = consumeVarint(b, pos); err != nil {
			break
		}
		switch {
		case int(n) < 0:
			err = errBadLength
		case n > uint64(len(b)-pos):
			err = errTruncated
		default:
			end := pos + int(n)
			r.data = b[pos:end:end]
			pos = end
		}
	case wireVarint:
		if pos < len(b) && b[pos] < 0x80 {
			r.val = uint64(b[pos])
			pos++
		} else {
			r.val, pos, err = consumeVarint(b, pos)
		}
	case wireI64:
		if len(b)-pos < 8 {
			err = errTruncated
		} else {
			r.val = binary.LittleEndian.Uint64(b[pos:])
			pos += 8
		}
	case wireI32:
		if len(b)-pos < 4 {
			err = errTruncated
		} else {
			r.val = uint64(binary.LittleEndian.Uint32(b[pos:]))
			pos += 4
		}
	case wireStartGroup, wireEndGroup:
		err = errGroup
	default:
		err = errBadWire
	}
	if err == nil && !r.s.accepts(num, typ) {
		err = errWireType
	}
	if err != nil {
		return 0, r.fail(start, num, err)
	}
	r.typ = typ
	r.pos = pos
	return num, nil
}

// next returns the next field; ok is false at the end of the message.
func (r *reader) next() (f field, ok bool, err error) {
	num, err := r.nextField()
	if err != nil || num == 0 {
		return field{}, false, err
	}
	f = field{num: num, typ: r.typ, start: r.start, end: r.pos}
	if r.typ == wireLen {
		f.data = r.data
	} else {
		f.val = r.val
	}
	return f, true, nil
}

func (r *reader) fail(off int, num int32, reason error) error {
	if reason == errWireType && r.s.strict {
		reason = r.s.versionReason(num, r.b, off)
	}
	return malformed(r.s.name, off, num, reason)
}

func sizeVarint(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func appendVarint(dst []byte, v uint64) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// putVarint writes v into b, which must be exactly sizeVarint(v) long.
func putVarint(b []byte, v uint64) {
	i := 0
	for v >= 0x80 {
		b[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	b[i] = byte(v)
}
