// SPDX-License-Identifier: Apache-2.0

package otlpwire

import "encoding/binary"

// KeyValue is a view of one attribute. It is valid as long as the bytes it
// was read from.
type KeyValue struct {
	key []byte
	b   []byte
	// str: b is the attribute's string value, resolved through the
	// dictionary of a profiles request, rather than the KeyValue encoding.
	str bool
	// dict resolves the references in b's value (profiles only).
	dict *dictRef
}

// parseKV reads one KeyValue in a single pass: it validates it completely,
// its value recursively down to depth maxDepth, and returns its key (the
// last occurrence of field 1, as pdata reads it) and decoded value.
func parseKV(b []byte, depth int) (key []byte, v Value, err error) {
	if k, val, ok := splitKV(b); ok {
		if err := v.mergeChecked(val, depth); err != nil {
			return nil, Value{}, err
		}
		return k, v, nil
	}
	rd := newReader(b, &schemaKeyValue)
	for {
		num, err := rd.nextField()
		if err != nil {
			return nil, Value{}, err
		}
		switch num {
		case 0:
			return key, v, nil
		case 1:
			key = rd.data
		case 2:
			// Several value fields merge: the last oneof member wins overall.
			if err := v.mergeChecked(rd.data, depth); err != nil {
				return nil, Value{}, err
			}
		}
	}
}

// splitKV splits, without a reader, the shape encoders write for short
// attributes: key and value in either order (SDKs write the key first,
// pdata the value), one-byte lengths, nothing else. ok is false for any
// other shape, which the schema reader then reads.
func splitKV(b []byte) (key, val []byte, ok bool) {
	if len(b) < 4 || b[1] >= 0x80 {
		return nil, nil, false
	}
	k := 2 + int(b[1])
	if k+2 > len(b) || b[k+1] >= 0x80 || k+2+int(b[k+1]) != len(b) {
		return nil, nil, false
	}
	switch {
	case b[0] == 0x0a && b[k] == 0x12:
		return b[2:k], b[k+2:], true
	case b[0] == 0x12 && b[k] == 0x0a:
		return b[k+2:], b[2:k], true
	}
	return nil, nil, false
}

// shortScalar recognises an AnyValue holding only a string with a one-byte
// length, a bool with a one-byte varint, an int varint, or a double. It
// returns the payload (the string, the varint, or the eight bytes of the
// double) and the value code, or code 0 (codeEmpty) for anything else.
func shortScalar(val []byte) (payload []byte, code uint8) {
	if len(val) < 2 {
		return nil, 0
	}
	switch val[0] {
	case 0x0a:
		if int(val[1]) == len(val)-2 {
			return val[2:], codeStr
		}
	case 0x18:
		// A varint that ends exactly at the end of the value, as
		// consumeVarint reads it (at most ten bytes).
		if len(val) <= 11 && val[len(val)-1] < 0x80 {
			for _, c := range val[1 : len(val)-1] {
				if c < 0x80 {
					return nil, 0
				}
			}
			return val[1:], codeInt
		}
	case 0x10:
		if len(val) == 2 && val[1] < 0x80 {
			return val[1:], codeBool
		}
	case 0x21:
		if len(val) == 9 {
			return val[1:], codeDouble
		}
	}
	return nil, 0
}

// shortVarint decodes a varint shortScalar has checked: the excess bits
// of a tenth byte are dropped, as consumeVarint drops them.
func shortVarint(b []byte) uint64 {
	var v uint64
	for i, c := range b {
		v |= uint64(c&0x7f) << (7 * i)
	}
	return v
}

// shortValueOf builds the Value of a payload shortScalar returned.
func shortValueOf(payload []byte, code uint8) Value {
	switch code {
	case codeStr:
		return Value{kind: ValueKindStr, data: payload}
	case codeInt:
		return Value{kind: ValueKindInt, num: shortVarint(payload)}
	case codeBool:
		return Value{kind: ValueKindBool, num: uint64(payload[0])}
	}
	return Value{kind: ValueKindDouble, num: binary.LittleEndian.Uint64(payload)}
}

// parseKeyValue reads the key of a KeyValue already validated by parseKV.
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
	if kv.str {
		return Value{kind: ValueKindStr, data: kv.b}, nil
	}
	var v Value
	rd := newReader(kv.b, &schemaKeyValue)
	for {
		f, ok, err := rd.next()
		if err != nil {
			return Value{}, err
		}
		if !ok {
			if kv.dict != nil {
				return kv.dict.resolveValue(v)
			}
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
