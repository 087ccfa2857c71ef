// SPDX-License-Identifier: Apache-2.0

package wirebench

import (
	"errors"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// The hand walks: a minimal reference for each question, written by hand over
// google.golang.org/protobuf/encoding/protowire the way an adopter would
// without a library. They read tags and lengths and descend only into the
// fields they need; they check that every tag, varint and length is well
// formed and in bounds (so they never panic) but not wire types of known
// fields, merge rules, the deprecated field 1000 of a ResourceX, or anything
// they skip. otlpwire checks all of that and still runs at or below their
// cost (benchmarks/RESULTS.md), so they are references, not floors: they were
// called floors until the library beat them.

// errWalk is returned by the hand walks on bytes they cannot walk.
var errWalk = errors.New("wirebench: malformed protobuf")

// field reads one field of b: its number, its payload for length-delimited
// fields (nil otherwise) and how many bytes it took, or n < 0.
func field(b []byte) (num protowire.Number, val []byte, n int) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return 0, nil, n
	}
	if typ == protowire.BytesType {
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return 0, nil, m
		}
		return num, v, n + m
	}
	m := protowire.ConsumeFieldValue(num, typ, b[n:])
	if m < 0 {
		return 0, nil, m
	}
	return num, nil, n + m
}

// countField counts the occurrences of field want in b.
func countField(b []byte, want protowire.Number) (int, error) {
	n := 0
	for len(b) > 0 {
		num, _, m := field(b)
		if m < 0 {
			return 0, errWalk
		}
		if num == want {
			n++
		}
		b = b[m:]
	}
	return n, nil
}

// WalkCount counts the spans, data points or log records of an export
// request with a minimal walk: request -> ResourceX (1) -> ScopeX (2) ->
// items (2); for metrics Metric (2) -> the last data field (5, 7, 9, 10 or 11)
// -> data points (1).
func WalkCount(sig otlpwire.Signal, b []byte) (int, error) {
	total := 0
	for len(b) > 0 {
		num, res, m := field(b)
		if m < 0 {
			return 0, errWalk
		}
		b = b[m:]
		if num != 1 {
			continue
		}
		for len(res) > 0 {
			num, scope, m := field(res)
			if m < 0 {
				return 0, errWalk
			}
			res = res[m:]
			if num != 2 {
				continue
			}
			var n int
			var err error
			if sig == otlpwire.SignalMetrics {
				n, err = walkMetrics(scope)
			} else {
				n, err = countField(scope, 2)
			}
			if err != nil {
				return 0, err
			}
			total += n
		}
	}
	return total, nil
}

func walkMetrics(scope []byte) (int, error) {
	total := 0
	for len(scope) > 0 {
		num, metric, m := field(scope)
		if m < 0 {
			return 0, errWalk
		}
		scope = scope[m:]
		if num != 2 {
			continue
		}
		points := 0
		for len(metric) > 0 {
			num, data, m := field(metric)
			if m < 0 {
				return 0, errWalk
			}
			metric = metric[m:]
			switch num {
			case 5, 7, 9, 10, 11:
				n, err := countField(data, 1)
				if err != nil {
					return 0, err
				}
				points = n
			}
		}
		total += points
	}
	return total, nil
}

// WalkResources calls fn with the bytes of every ResourceX of an export
// request (field 1), the reference of resource iteration.
func WalkResources(b []byte, fn func(resourceX []byte)) error {
	for len(b) > 0 {
		num, res, m := field(b)
		if m < 0 {
			return errWalk
		}
		if num == 1 {
			fn(res)
		}
		b = b[m:]
	}
	return nil
}

// LookupString returns the string value of the first attribute called key of
// a Resource message (or InstrumentationScope, or any message whose field 1
// holds KeyValues), in one pass over each KeyValue: it reads the key and
// value fields once and decodes the value only when the key matches. found
// is false when the key is absent; a matching non-string value returns nil.
func LookupString(resource []byte, key string) (val []byte, found bool, err error) {
	for len(resource) > 0 {
		num, kv, m := field(resource)
		if m < 0 {
			return nil, false, errWalk
		}
		resource = resource[m:]
		if num != 1 {
			continue
		}
		var k, v []byte
		for len(kv) > 0 {
			num, f, m := field(kv)
			if m < 0 {
				return nil, false, errWalk
			}
			kv = kv[m:]
			switch num {
			case 1:
				k = f
			case 2:
				v = f
			}
		}
		if string(k) != key {
			continue
		}
		var s []byte
		for len(v) > 0 {
			num, f, m := field(v)
			if m < 0 {
				return nil, false, errWalk
			}
			v = v[m:]
			if num == 1 {
				s = f
			}
		}
		return s, true, nil
	}
	return nil, false, nil
}

// ResourceOf returns the Resource message (field 1) of a ResourceX.
func ResourceOf(resourceX []byte) ([]byte, error) {
	var res []byte
	for len(resourceX) > 0 {
		num, f, m := field(resourceX)
		if m < 0 {
			return nil, errWalk
		}
		if num == 1 {
			res = f
		}
		resourceX = resourceX[m:]
	}
	return res, nil
}

// WalkLookup looks key up in the resource of every ResourceX of an export
// request with the hand walks above and returns the total length of the string
// values found and how many resources had the key.
func WalkLookup(b []byte, key string) (total, found int, err error) {
	for len(b) > 0 {
		num, rx, m := field(b)
		if m < 0 {
			return 0, 0, errWalk
		}
		b = b[m:]
		if num != 1 {
			continue
		}
		res, err := ResourceOf(rx)
		if err != nil {
			return 0, 0, err
		}
		v, ok, err := LookupString(res, key)
		if err != nil {
			return 0, 0, err
		}
		if ok {
			found++
			total += len(v)
		}
	}
	return total, found, nil
}
