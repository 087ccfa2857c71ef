package otlpwire

// Counting walks the containers down to the items and validates every level
// it walks (framing and the wire types of known fields). Span and log record
// contents are not inspected; metrics are walked down to their data field,
// because that is where data points live.

func countResource(sig Signal, b []byte) (int, error) {
	_, res, _ := sig.schemas()
	rd := newReader(b, res)
	var current, deprecated int
	hasCurrent := false
	for {
		f, ok, err := rd.next()
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		switch f.num {
		case fieldScopes:
			hasCurrent = true
			n, err := countScope(sig, f.data)
			if err != nil {
				return 0, err
			}
			current += n
		case fieldDeprecated:
			n, err := countScope(sig, f.data)
			if err != nil {
				return 0, err
			}
			deprecated += n
		}
	}
	if hasCurrent {
		return current, nil
	}
	return deprecated, nil
}

func countScope(sig Signal, b []byte) (int, error) {
	_, _, sc := sig.schemas()
	rd := newReader(b, sc)
	n := 0
	for {
		f, ok, err := rd.next()
		if err != nil {
			return 0, err
		}
		if !ok {
			return n, nil
		}
		if f.num != fieldItems {
			continue
		}
		if sig != SignalMetrics {
			n++
			continue
		}
		c, err := countMetric(f.data)
		if err != nil {
			return 0, err
		}
		n += c
	}
}

// countMetric returns the data points of the metric's data field. Like
// pdata, when several data fields occur the last one replaces the others
// (without merging, even when they are of the same kind).
func countMetric(b []byte) (int, error) {
	rd := newReader(b, &schemaMetric)
	n := 0
	for {
		f, ok, err := rd.next()
		if err != nil {
			return 0, err
		}
		if !ok {
			return n, nil
		}
		if s := dataSchema(f.num); s != nil {
			if n, err = countField(f.data, s, 1); err != nil {
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
		f, ok, err := rd.next()
		if err != nil {
			return 0, err
		}
		if !ok {
			return n, nil
		}
		if f.num == num {
			n++
		}
	}
}
