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
	s := "otlpwire: malformed " + e.Message + " at byte " + strconv.Itoa(e.Offset)
	if e.Field != 0 {
		s += " (field " + strconv.Itoa(int(e.Field)) + ")"
	}
	return s + ": " + e.reason.Error()
}

// Unwrap lets errors.Is match both ErrMalformed and the specific reason.
// Groups and deep nesting also match ErrUnsupported.
func (e *ParseError) Unwrap() []error {
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
type reader struct {
	b   []byte
	pos int
	s   *schema
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

// next returns the next field; ok is false at the end of the message.
func (r *reader) next() (f field, ok bool, err error) {
	if r.pos >= len(r.b) {
		return field{}, false, nil
	}
	start := r.pos
	tag, pos, err := consumeVarint(r.b, r.pos)
	if err != nil {
		return field{}, false, r.fail(start, 0, err)
	}
	// pdata keeps the low 32 bits of the field number; match it so that
	// inputs pdata accepts are read the same way.
	num := int32(tag >> 3)
	if num <= 0 {
		return field{}, false, r.fail(start, 0, errFieldZero)
	}
	f = field{num: num, typ: uint8(tag & 7), start: start}
	switch f.typ {
	case wireVarint:
		f.val, pos, err = consumeVarint(r.b, pos)
	case wireI64:
		if len(r.b)-pos < 8 {
			err = errTruncated
		} else {
			f.val = binary.LittleEndian.Uint64(r.b[pos:])
			pos += 8
		}
	case wireI32:
		if len(r.b)-pos < 4 {
			err = errTruncated
		} else {
			f.val = uint64(binary.LittleEndian.Uint32(r.b[pos:]))
			pos += 4
		}
	case wireLen:
		var n uint64
		n, pos, err = consumeVarint(r.b, pos)
		if err == nil {
			switch {
			case int(n) < 0:
				err = errBadLength
			case n > uint64(len(r.b)-pos):
				err = errTruncated
			default:
				f.data = r.b[pos : pos+int(n) : pos+int(n)]
				pos += int(n)
			}
		}
	case wireStartGroup, wireEndGroup:
		err = errGroup
	default:
		err = errBadWire
	}
	if err != nil {
		return field{}, false, r.fail(start, num, err)
	}
	if !r.s.accepts(num, f.typ) {
		return field{}, false, r.fail(start, num, errWireType)
	}
	r.pos = pos
	f.end = pos
	return f, true, nil
}

func (r *reader) fail(off int, num int32, reason error) error {
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
