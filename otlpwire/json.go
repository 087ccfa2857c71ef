// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"bytes"
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"
)

// appendJSON renders an array or kvlist value as JSON, byte for byte as
// pdata's AsString does (encoding/json over AsRaw, without HTML escaping):
// kvlist keys sorted bytewise with the last duplicate winning, bytes as
// base64 strings, empty values and empty bytes as null. It returns ErrNoText
// when a double inside is NaN or infinite (pdata then renders nothing), and
// an error matching ErrMalformed for malformed nested content; dst is
// returned unchanged in both cases.
func appendJSON(dst []byte, v Value) ([]byte, error) {
	out, err := appendJSONValue(dst, v, 0)
	if err != nil {
		return dst, err
	}
	return out, nil
}

func appendJSONValue(dst []byte, v Value, depth int) ([]byte, error) {
	if depth > maxDepth {
		return dst, malformed("AnyValue", 0, 0, errTooDeep)
	}
	switch v.kind {
	case ValueKindEmpty:
		return append(dst, "null"...), nil
	case ValueKindStr:
		return appendJSONString(dst, v.data), nil
	case ValueKindBool:
		return strconv.AppendBool(dst, v.num != 0), nil
	case ValueKindInt:
		return strconv.AppendInt(dst, int64(v.num), 10), nil
	case ValueKindDouble:
		f := math.Float64frombits(v.num)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return dst, ErrNoText
		}
		return appendES6Float(dst, f), nil
	case ValueKindBytes:
		// pdata's AsRaw holds a nil slice for empty bytes, which
		// encoding/json writes as null.
		if len(v.data) == 0 {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.data)
		return append(dst, '"'), nil
	case ValueKindSlice:
		dst = append(dst, '[')
		first := true
		for e, err := range v.Slice() {
			if err != nil {
				return dst, err
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			if dst, err = appendJSONValue(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case ValueKindMap:
		return appendJSONMap(dst, v, depth)
	}
	return dst, nil
}

// appendJSONMap writes the entries of v, a kvlist, in key order without
// allocating: each round selects the smallest key greater than the previous
// one. The entries are read as Map yields them, so the keys and values of
// a profiles resource's kvlist are resolved through its dictionary.
func appendJSONMap(dst []byte, v Value, depth int) ([]byte, error) {
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

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does with HTML escaping off.
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRune(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		} else if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xf])
		} else {
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
