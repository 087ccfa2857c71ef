// SPDX-License-Identifier: Apache-2.0

package otlpwire

// Counting walks the containers down to the items and validates every level
// it walks (framing and the wire types of known fields). Span and log record
// contents are not inspected; metrics are walked down to their data field,
// because that is where data points live.

func countResource(sig Signal, b []byte) (int, error) {
	if sig == SignalProfiles {
		n, _, err := countResourceProfiles(b)
		return n, err
	}
	_, res, sc := sig.schemas()
	rd := newReader(b, res)
	var current, deprecated int
	hasCurrent := false
	for {
		num, err := rd.nextField()
		if err != nil {
			return 0, err
		}
		switch num {
		case 0:
			if hasCurrent {
				return current, nil
			}
			return deprecated, nil
		case fieldScopes:
			hasCurrent = true
			n, err := countScope(sig, sc, rd.data)
			if err != nil {
				return 0, err
			}
			current += n
		case fieldDeprecated:
			n, err := countScope(sig, sc, rd.data)
			if err != nil {
				return 0, err
			}
			deprecated += n
		}
	}
}

// countScope counts the items of one ScopeSpans, ScopeMetrics or ScopeLogs
// message b, whose schema is sc.
func countScope(sig Signal, sc *schema, b []byte) (int, error) {
	if sig == SignalProfiles {
		n, _, err := countScopeProfiles(b)
		return n, err
	}
	if sig != SignalMetrics {
		return countField(b, sc, fieldItems)
	}
	rd := newReader(b, sc)
	n := 0
	for {
		num, err := rd.nextField()
		if err != nil {
			return 0, err
		}
		if num == 0 {
			return n, nil
		}
		if num == fieldItems {
			c, err := countMetric(rd.data)
			if err != nil {
				return 0, err
			}
			n += c
		}
	}
}

// countMetric returns the data points of the metric's data field. Like
// pdata, when several data fields occur the last one replaces the others
// (without merging, even when they are of the same kind).
func countMetric(b []byte) (int, error) {
	rd := newReader(b, &schemaMetric)
	n := 0
	for {
		num, err := rd.nextField()
		if err != nil {
			return 0, err
		}
		if num == 0 {
			return n, nil
		}
		if s := dataSchema(num); s != nil {
			if n, err = countField(rd.data, s, 1); err != nil {
				return 0, err
			}
		}
	}
}

// dataSchema returns the schema of the Metric data field num, or nil.
func dataSchema(num int32) *schema {
	switch num {
	case 5:
		return &schemaGauge
	case 7:
		return &schemaSum
	case 9:
		return &schemaHistogram
	case 10:
		return &schemaExpHistogram
	case 11:
		return &schemaSummary
	}
	return nil
}

// countField counts the occurrences of field num in a message.
//
// The items it counts (spans, log records, metrics' data points, array
// elements) are LEN fields whose tag and length take one or two bytes each,
// one after another; countField skips those in a loop of its own that reads
// nothing else and calls nothing, because a call to the general reader per
// item cost more than the item (a data point of 10 attributes is over 127
// bytes, so its length is a two-byte varint, which the reader reads in a
// loop). Every other field, and any item the loop does not recognise as
// well formed, goes to the reader from the same offset, so the errors and
// their offsets are the reader's own.
func countField(b []byte, s *schema, num int32) (int, error) {
	if num <= 0 || num >= 16 || !s.accepts(num, wireLen) {
		return countFieldSlow(b, s, num)
	}
	tag := byte(num<<3 | wireLen)
	rd := newReader(b, s)
	n := 0
	for {
		pos, end := skipLenRun(b, rd.pos, tag)
		n += end
		rd.pos = pos
		f, err := rd.nextField()
		if err != nil {
			return 0, err
		}
		if f == 0 {
			return n, nil
		}
		if f == num {
			n++
		}
	}
}

// skipLenRun skips the fields from pos on that have the one-byte tag tag,
// a length of one or two varint bytes and a payload in bounds, and returns
// the offset of the first field it did not skip and how many it skipped.
func skipLenRun(b []byte, pos int, tag byte) (int, int) {
	n := 0
	for pos+1 < len(b) && b[pos] == tag {
		l := uint(b[pos+1])
		p := pos + 2
		if l >= 0x80 {
			if p >= len(b) || b[p] >= 0x80 {
				break
			}
			l = l&0x7f | uint(b[p])<<7
			p++
		}
		if l > uint(len(b)-p) {
			break
		}
		pos = p + int(l)
		n++
	}
	return pos, n
}

// countFieldSlow counts the occurrences of field num in a message with the
// general reader alone.
func countFieldSlow(b []byte, s *schema, num int32) (int, error) {
	rd := newReader(b, s)
	n := 0
	for {
		f, err := rd.nextField()
		if err != nil {
			return 0, err
		}
		if f == 0 {
			return n, nil
		}
		if f == num {
			n++
		}
	}
}
