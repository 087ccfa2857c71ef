package otlpwire

import (
	"encoding/base64"
	"iter"
	"math"
	"strconv"
)

// maxDepth bounds the nesting of array and kvlist values that Value walks
// recursively, so hostile input cannot exhaust the stack.
const maxDepth = 100

// segReader reads the fields of a message that may be spread over several
// occurrences of one field of a container: protobuf merges repeated
// occurrences of a singular message field, which is the same as reading
// their concatenation.
type segReader struct {
	outer  reader
	inner  reader
	field  int32
	active bool
}

func newSegReader(b []byte, outer *schema, container int32, inner *schema) segReader {
	if container == 0 {
		return segReader{inner: newReader(b, inner), active: true}
	}
	return segReader{outer: newReader(b, outer), field: container, inner: reader{s: inner}}
}

func (s *segReader) next() (field, bool, error) {
	for {
		if s.active {
			f, ok, err := s.inner.next()
			if err != nil || ok {
				return f, ok, err
			}
			s.active = false
		}
		if s.field == 0 {
			return field{}, false, nil
		}
		of, ok, err := s.outer.next()
		if err != nil || !ok {
			return field{}, false, err
		}
		if of.num == s.field {
			s.inner = newReader(of.data, s.inner.s)
			s.active = true
		}
	}
}

// attrList is what Resource and InstrumentationScope have in common: a
// message (possibly merged from several occurrences) with a repeated
// KeyValue field.
type attrList struct {
	b         []byte
	outer     *schema // schema of the container, when container != 0
	container int32   // field of the container holding the message; 0: b is the message
	self      *schema
	attrField int32
}

func (l attrList) reader() segReader {
	return newSegReader(l.b, l.outer, l.container, l.self)
}

func (l attrList) all() iter.Seq2[KeyValue, error] {
	return func(yield func(KeyValue, error) bool) { l.each(yield) }
}

func (l attrList) each(yield func(KeyValue, error) bool) {
	rd := l.reader()
	for {
		f, ok, err := rd.next()
		if err != nil {
			yield(KeyValue{}, err)
			return
		}
		if !ok {
			return
		}
		if f.num != l.attrField {
			continue
		}
		kv, err := parseKeyValue(f.data)
		if !yield(kv, err) || err != nil {
			return
		}
	}
}

func (l attrList) get(key string) (Value, bool, error) {
	rd := l.reader()
	for {
		f, ok, err := rd.next()
		if err != nil || !ok {
			return Value{}, false, err
		}
		if f.num != l.attrField {
			continue
		}
		kv, err := parseKeyValue(f.data)
		if err != nil {
			return Value{}, false, err
		}
		if string(kv.key) == key {
			v, err := kv.Value()
			return v, err == nil, err
		}
	}
}

func (l attrList) hash() (uint64, error) {
	rd := l.reader()
	var sum, n uint64
	for {
		f, ok, err := rd.next()
		if err != nil {
			return 0, err
		}
		if !ok {
			return finishHash(sum, n), nil
		}
		if f.num != l.attrField {
			continue
		}
		kv, err := parseKeyValue(f.data)
		if err != nil {
			return 0, err
		}
		h, err := hashAttribute(kv, 0)
		if err != nil {
			return 0, err
		}
		sum += h
		n++
	}
}

func (l attrList) hashKeys(keys []string) (uint64, int, error) {
	var sum, n uint64
outer:
	for i, k := range keys {
		for _, prev := range keys[:i] {
			if prev == k {
				continue outer
			}
		}
		v, ok, err := l.get(k)
		if err != nil {
			return 0, 0, err
		}
		if !ok {
			continue
		}
		h, err := hashKeyValue(fnvString(fnvOffset, k), v, 0)
		if err != nil {
			return 0, 0, err
		}
		sum += h
		n++
	}
	return finishHash(sum, n), int(n), nil
}

// Resource is a view of an OTLP Resource message.
type Resource struct{ l attrList }

// NewResource returns a view of b, the encoding of one Resource message.
func NewResource(b []byte) Resource {
	return Resource{attrList{b: b, self: &schemaResource, attrField: fieldResourceAttrs}}
}

// Attributes iterates over the resource attributes in wire order, including
// duplicated keys. Each KeyValue is validated before it is yielded; after an
// error the iteration stops.
func (r Resource) Attributes() iter.Seq2[KeyValue, error] { return r.l.all() }

// Attribute returns the value of the first attribute named key, as pdata's
// Map.Get does.
func (r Resource) Attribute(key string) (Value, bool, error) { return r.l.get(key) }

// Hash returns the routing hash of all resource attributes. See the package
// documentation for the algorithm, which is stable across releases.
func (r Resource) Hash() (uint64, error) { return r.l.hash() }

// HashKeys returns the routing hash of the attributes named in keys (the
// first occurrence of each, like Attribute) and how many of them were
// present. Keys listed twice count once; the order of keys does not matter.
// When keys names every attribute of a resource without duplicate keys,
// HashKeys equals Hash.
func (r Resource) HashKeys(keys []string) (hash uint64, found int, err error) {
	return r.l.hashKeys(keys)
}

// DroppedAttributesCount returns the dropped_attributes_count field.
func (r Resource) DroppedAttributesCount() (uint32, error) {
	v, err := r.l.lastScalar(2)
	return uint32(v), err
}

func (l attrList) lastScalar(num int32) (uint64, error) {
	rd := l.reader()
	var v uint64
	for {
		f, ok, err := rd.next()
		if err != nil || !ok {
			return v, err
		}
		if f.num == num {
			v = f.val
		}
	}
}

func (l attrList) lastBytes(num int32) ([]byte, error) {
	rd := l.reader()
	var v []byte
	for {
		f, ok, err := rd.next()
		if err != nil || !ok {
			return v, err
		}
		if f.num == num {
			v = f.data
		}
	}
}

// InstrumentationScope is a view of an OTLP InstrumentationScope message.
type InstrumentationScope struct{ l attrList }

// NewInstrumentationScope returns a view of b, the encoding of one
// InstrumentationScope message.
func NewInstrumentationScope(b []byte) InstrumentationScope {
	return InstrumentationScope{attrList{b: b, self: &schemaScope, attrField: fieldScopeAttrs}}
}

// Name returns the scope name. The slice aliases the request.
func (s InstrumentationScope) Name() ([]byte, error) { return s.l.lastBytes(1) }

// Version returns the scope version. The slice aliases the request.
func (s InstrumentationScope) Version() ([]byte, error) { return s.l.lastBytes(2) }

// Attributes iterates over the scope attributes in wire order.
func (s InstrumentationScope) Attributes() iter.Seq2[KeyValue, error] { return s.l.all() }

// Attribute returns the value of the first scope attribute named key.
func (s InstrumentationScope) Attribute(key string) (Value, bool, error) { return s.l.get(key) }

// KeyValue is a view of one attribute. It is valid as long as the bytes it
// was read from.
type KeyValue struct {
	key []byte
	b   []byte
}

// parseKeyValue validates the framing of a KeyValue and finds its key (the
// last occurrence of field 1, as pdata reads it).
func parseKeyValue(b []byte) (KeyValue, error) {
	rd := newReader(b, &schemaKeyValue)
	kv := KeyValue{b: b}
	for {
		f, ok, err := rd.next()
		if err != nil {
			return KeyValue{}, err
		}
		if !ok {
			return kv, nil
		}
		if f.num == 1 {
			kv.key = f.data
		}
	}
}

// Key returns a copy of the attribute key.
func (kv KeyValue) Key() string { return string(kv.key) }

// KeyBytes returns the attribute key without copying; it aliases the request.
func (kv KeyValue) KeyBytes() []byte { return kv.key }

// Value decodes the attribute value. An attribute without a value has an
// empty Value (ValueKindEmpty).
func (kv KeyValue) Value() (Value, error) {
	var v Value
	rd := newReader(kv.b, &schemaKeyValue)
	for {
		f, ok, err := rd.next()
		if err != nil {
			return Value{}, err
		}
		if !ok {
			return v, nil
		}
		// Several value fields merge: the last oneof member wins overall.
		if f.num == 2 {
			if err := v.merge(f.data); err != nil {
				return Value{}, err
			}
		}
	}
}

// ValueKind is the type of an attribute value. The numbers match pdata's
// pcommon.ValueType.
type ValueKind uint8

// Value kinds.
const (
	ValueKindEmpty ValueKind = iota
	ValueKindStr
	ValueKindInt
	ValueKindDouble
	ValueKindBool
	ValueKindMap
	ValueKindSlice
	ValueKindBytes
)

// String returns the name pdata uses for the kind: "Empty", "Str", "Int",
// "Double", "Bool", "Map", "Slice" or "Bytes".
func (k ValueKind) String() string {
	switch k {
	case ValueKindEmpty:
		return "Empty"
	case ValueKindStr:
		return "Str"
	case ValueKindInt:
		return "Int"
	case ValueKindDouble:
		return "Double"
	case ValueKindBool:
		return "Bool"
	case ValueKindMap:
		return "Map"
	case ValueKindSlice:
		return "Slice"
	case ValueKindBytes:
		return "Bytes"
	}
	return "ValueKind(" + strconv.Itoa(int(k)) + ")"
}

// Value is a decoded AnyValue. Strings, bytes, arrays and kvlists alias the
// request bytes.
type Value struct {
	kind ValueKind
	data []byte
	num  uint64
}

// NewValue decodes b, the encoding of one AnyValue message.
func NewValue(b []byte) (Value, error) {
	var v Value
	err := v.merge(b)
	return v, err
}

// merge applies the fields of one AnyValue encoding to v.
func (v *Value) merge(b []byte) error {
	rd := newReader(b, &schemaAnyValue)
	for {
		f, ok, err := rd.next()
		if err != nil || !ok {
			return err
		}
		switch f.num {
		case 1:
			*v = Value{kind: ValueKindStr, data: f.data}
		case 2:
			*v = Value{kind: ValueKindBool, num: f.val}
		case 3:
			*v = Value{kind: ValueKindInt, num: f.val}
		case 4:
			*v = Value{kind: ValueKindDouble, num: f.val}
		case 5:
			*v = Value{kind: ValueKindSlice, data: f.data}
		case 6:
			*v = Value{kind: ValueKindMap, data: f.data}
		case 7:
			*v = Value{kind: ValueKindBytes, data: f.data}
		case 8:
			// A string-table index: pdata exposes it as an empty value.
			*v = Value{}
		}
	}
}

// Kind returns the value's kind.
func (v Value) Kind() ValueKind { return v.kind }

// Str returns a copy of a string value, or "" for other kinds.
func (v Value) Str() string {
	if v.kind != ValueKindStr {
		return ""
	}
	return string(v.data)
}

// Bool returns a bool value, or false for other kinds.
func (v Value) Bool() bool { return v.kind == ValueKindBool && v.num != 0 }

// Int returns an int value, or 0 for other kinds.
func (v Value) Int() int64 {
	if v.kind != ValueKindInt {
		return 0
	}
	return int64(v.num)
}

// Double returns a double value, or 0 for other kinds.
func (v Value) Double() float64 {
	if v.kind != ValueKindDouble {
		return 0
	}
	return math.Float64frombits(v.num)
}

// Bytes returns the raw payload of a string or bytes value without copying
// (it aliases the request), or nil for other kinds.
func (v Value) Bytes() []byte {
	if v.kind != ValueKindStr && v.kind != ValueKindBytes {
		return nil
	}
	return v.data
}

// Slice iterates over the elements of an array value (nothing for other kinds).
func (v Value) Slice() iter.Seq2[Value, error] {
	return func(yield func(Value, error) bool) { v.elements(yield) }
}

func (v Value) elements(yield func(Value, error) bool) {
	if v.kind != ValueKindSlice {
		return
	}
	rd := newReader(v.data, &schemaArrayValue)
	for {
		f, ok, err := rd.next()
		if err != nil {
			yield(Value{}, err)
			return
		}
		if !ok {
			return
		}
		if f.num != 1 {
			continue
		}
		var e Value
		err = e.merge(f.data)
		if !yield(e, err) || err != nil {
			return
		}
	}
}

// Map iterates over the entries of a kvlist value in wire order (nothing for
// other kinds).
func (v Value) Map() iter.Seq2[KeyValue, error] {
	return func(yield func(KeyValue, error) bool) {
		if v.kind == ValueKindMap {
			attrList{b: v.data, self: &schemaKeyValueList, attrField: 1}.each(yield)
		}
	}
}

// AppendText appends the value as text and returns the extended slice. For
// strings, bools, ints, doubles, bytes and empty values the text is exactly
// pdata's pcommon.Value.AsString(): the raw string, "true"/"false", decimal,
// the ECMAScript number form (with "NaN", "Infinity", "-Infinity"), standard
// base64, and nothing. Arrays and kvlists are rendered as JSON (see
// appendJSON); malformed nested content renders as nothing.
func (v Value) AppendText(dst []byte) []byte {
	switch v.kind {
	case ValueKindStr:
		return append(dst, v.data...)
	case ValueKindBool:
		return strconv.AppendBool(dst, v.num != 0)
	case ValueKindInt:
		return strconv.AppendInt(dst, int64(v.num), 10)
	case ValueKindDouble:
		return appendFloat(dst, math.Float64frombits(v.num))
	case ValueKindBytes:
		return base64.StdEncoding.AppendEncode(dst, v.data)
	case ValueKindSlice, ValueKindMap:
		return appendJSON(dst, v)
	}
	return dst
}

// appendFloat formats f as pdata's AsString does (ES6 number to string).
func appendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	return appendES6Float(dst, f)
}

func appendES6Float(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Turn e-09 into e-9.
		n := len(dst) - start
		if n >= 4 && dst[len(dst)-4] == 'e' && dst[len(dst)-3] == '-' && dst[len(dst)-2] == '0' {
			dst[len(dst)-2] = dst[len(dst)-1]
			dst = dst[:len(dst)-1]
		}
	}
	return dst
}
