// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"encoding/base64"
	"errors"
	"iter"
	"math"
	"strconv"
)

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
	// ref marks an empty value read from string_value_strindex, num holding
	// the index: the views of a profiles resource resolve it.
	ref  bool
	data []byte
	// dict resolves the string-table references nested in an array or
	// kvlist value of a profiles resource or scope; nil elsewhere.
	dict *dictRef
	num  uint64
}

// NewValue decodes b, the encoding of one AnyValue message, after
// validating it completely (nested arrays and kvlists included) as pdata's
// unmarshaler would.
func NewValue(b []byte) (Value, error) {
	var v Value
	err := v.mergeChecked(b, 0)
	return v, err
}

// mergeChecked validates one AnyValue encoding completely and applies it to
// v. Every member is validated, including those a later member replaces:
// pdata decodes (and so rejects) each of them. depth is the nesting level of
// the value; deeper than maxDepth is an error.
func (v *Value) mergeChecked(b []byte, depth int) error {
	if depth > maxDepth {
		return malformed("AnyValue", 0, 0, errTooDeep)
	}
	if payload, code := shortScalar(b); code != 0 {
		*v = shortValueOf(payload, code)
		return nil
	}
	rd := newReader(b, &schemaAnyValue)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		switch num {
		case 5:
			if err := checkArray(rd.data, depth+1); err != nil {
				return err
			}
		case 6:
			if err := checkKVList(rd.data, depth+1); err != nil {
				return err
			}
		}
		v.set(num, &rd)
	}
}

// checkArray validates an ArrayValue whose elements are at depth.
func checkArray(b []byte, depth int) error {
	rd := newReader(b, &schemaArrayValue)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		if num == 1 {
			var e Value
			if err := e.mergeChecked(rd.data, depth); err != nil {
				return err
			}
		}
	}
}

// checkKVList validates a KeyValueList whose entries are at depth.
func checkKVList(b []byte, depth int) error {
	rd := newReader(b, &schemaKeyValueList)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		if num == 1 {
			if _, _, err := parseKV(rd.data, depth); err != nil {
				return err
			}
		}
	}
}

// merge applies the fields of one AnyValue encoding, already validated by
// mergeChecked, to v.
func (v *Value) merge(b []byte) error {
	rd := newReader(b, &schemaAnyValue)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		v.set(num, &rd)
	}
}

// set applies the AnyValue field num, just read by rd, to v: the last oneof
// member wins.
func (v *Value) set(num int32, rd *reader) {
	switch num {
	case 1:
		*v = Value{kind: ValueKindStr, data: rd.data}
	case 2:
		*v = Value{kind: ValueKindBool, num: rd.val}
	case 3:
		*v = Value{kind: ValueKindInt, num: rd.val}
	case 4:
		*v = Value{kind: ValueKindDouble, num: rd.val}
	case 5:
		*v = Value{kind: ValueKindSlice, data: rd.data}
	case 6:
		*v = Value{kind: ValueKindMap, data: rd.data}
	case 7:
		*v = Value{kind: ValueKindBytes, data: rd.data}
	case 8:
		// A string-table index: pdata exposes it as an empty value,
		// except in the attributes of a profiles resource or scope,
		// which it resolves through the dictionary (see resolve.go).
		*v = Value{ref: true, num: rd.val}
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
		if err == nil && v.dict != nil {
			e, err = v.dict.resolveValue(e)
		}
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
			l := attrList{b: v.data, self: &schemaKeyValueList, attrField: 1}
			if v.dict != nil {
				dictList{l: l, d: *v.dict, p: v.dict}.each(yield)
				return
			}
			l.each(yield)
		}
	}
}

// ErrNoText is returned by Value.Text for an array or kvlist value holding
// a NaN or infinite double, which JSON cannot represent; pdata's AsString
// renders such a value as the empty string.
var ErrNoText = errors.New("otlpwire: value has no text form")

// Text appends the value as text to dst and returns the extended slice. For
// strings, bools, ints, doubles, bytes and empty values the text is exactly
// pdata's pcommon.Value.AsString(): the raw string, "true"/"false", decimal,
// the ECMAScript number form (with "NaN", "Infinity", "-Infinity"), standard
// base64, and nothing. Arrays and kvlists are rendered as JSON, byte for byte
// as AsString renders them (keys sorted, the last duplicate key winning,
// bytes as base64 strings, empty values and empty bytes as null). When the
// value cannot be rendered, Text returns dst unchanged and an error:
// ErrNoText for a NaN or infinite double inside an array or kvlist, an error
// matching ErrMalformed for malformed nested content (which a Value obtained
// from this package never holds: values are validated when they are read).
func (v Value) Text(dst []byte) ([]byte, error) {
	switch v.kind {
	case ValueKindStr:
		return append(dst, v.data...), nil
	case ValueKindBool:
		return strconv.AppendBool(dst, v.num != 0), nil
	case ValueKindInt:
		return strconv.AppendInt(dst, int64(v.num), 10), nil
	case ValueKindDouble:
		return appendFloat(dst, math.Float64frombits(v.num)), nil
	case ValueKindBytes:
		return base64.StdEncoding.AppendEncode(dst, v.data), nil
	case ValueKindSlice, ValueKindMap:
		return appendJSON(dst, v)
	}
	return dst, nil
}

// AppendText appends the value as text and returns the extended slice: the
// text of Text, or nothing where Text reports an error. For values pdata can
// hold this is exactly pcommon.Value.AsString(), which also renders an array
// or kvlist holding a NaN or infinite double as the empty string. Use Text to
// tell an empty text from one that could not be rendered.
func (v Value) AppendText(dst []byte) []byte {
	out, _ := v.Text(dst)
	return out
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
