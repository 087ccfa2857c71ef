// SPDX-License-Identifier: Apache-2.0

package otlpwire

import "bytes"

// checkNested resolves every string reference nested in an array or kvlist
// value, so that one pdata refuses fails where the attribute is read
// rather than vanishing from a hash.
func checkNested(v Value) error {
	switch v.kind {
	case ValueKindSlice:
		for e, err := range v.Slice() {
			if err != nil {
				return err
			}
			if err := checkNested(e); err != nil {
				return err
			}
		}
	case ValueKindMap:
		for kv, err := range v.Map() {
			if err != nil {
				return err
			}
			// Map's entries are checked as they are read (eachResolved).
			_ = kv
		}
	}
	return nil
}

// resolveValue returns v with its string-table reference resolved through
// d, or, for an array or kvlist, with d attached for its elements.
func (d *dictRef) resolveValue(v Value) (Value, error) {
	switch {
	case v.ref:
		if int32(v.num) < 0 {
			return Value{}, malformed("AnyValue", 0, 8, errStrindex)
		}
		var found []byte
		ok := false
		if err := d.eachString(func(i int, s []byte) bool {
			if i == int(int32(v.num)) {
				found, ok = s, true
			}
			return !ok
		}); err != nil {
			return Value{}, err
		}
		if !ok {
			return Value{}, malformed("AnyValue", 0, 8, errStrindex)
		}
		return Value{kind: ValueKindStr, data: found}, nil
	case v.kind == ValueKindSlice || v.kind == ValueKindMap:
		v.dict = d
	}
	return v, nil
}

// appendJSONMapResolved is appendJSONMap for a kvlist of a profiles
// resource or scope, whose keys and values are resolved as Map yields them.
func appendJSONMapResolved(dst []byte, v Value, depth int) ([]byte, error) {
	dst = append(dst, '{')
	var prev []byte
	havePrev := false
	for {
		var key []byte
		var val KeyValue
		found := false
		for kv, err := range v.Map() {
			if err != nil {
				return dst, err
			}
			if havePrev && bytes.Compare(kv.key, prev) <= 0 {
				continue
			}
			// The last occurrence of the smallest key wins, as in AsRaw.
			if c := bytes.Compare(kv.key, key); !found || c <= 0 {
				key, val, found = kv.key, kv, true
			}
		}
		if !found {
			return append(dst, '}'), nil
		}
		if havePrev {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, key)
		dst = append(dst, ':')
		e, err := val.Value()
		if err != nil {
			return dst, err
		}
		if dst, err = appendJSONValue(dst, e, depth+1); err != nil {
			return dst, err
		}
		prev, havePrev = key, true
	}
}
