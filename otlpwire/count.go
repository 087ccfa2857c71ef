// SPDX-License-Identifier: Apache-2.0

package otlpwire

// Counting walks the containers down to the items and validates every level
// it walks (framing and the wire types of known fields). Span and log record
// contents are not inspected; metrics are walked down to their data field,
// because that is where data points live.

func countResource(sig Signal, b []byte) (int, error) {
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
func countField(b []byte, s *schema, num int32) (int, error) {
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
