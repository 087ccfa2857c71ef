// SPDX-License-Identifier: Apache-2.0

package otlpwire

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
