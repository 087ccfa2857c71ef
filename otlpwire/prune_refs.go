// SPDX-License-Identifier: Apache-2.0

package otlpwire

// close extends the marks from what samples and profiles reference to
// everything those entries reference in turn. The tables reference each
// other in one direction only (stacks -> locations -> mappings, functions,
// attributes -> strings), so one pass per table in that order suffices.
func (p *PruneScratch) close(dict []byte) error {
	steps := [...]struct {
		table int32
		refs  func(int32) int32
	}{
		{tableStack, func(int32) int32 { return tableLocation }},
		{tableLocation, locationRefs},
		{tableFunction, functionRefs},
		{tableMapping, mappingRefs},
	}
	for _, st := range steps {
		s := tableSchema(st.table)
		for i, m := range p.marks[st.table] {
			if !m {
				continue
			}
			payload, err := p.entry(dict, st.table, i)
			if err != nil {
				return err
			}
			if st.table == tableLocation {
				err = p.markLocation(payload)
			} else {
				err = p.markFields(payload, s, st.refs)
			}
			if err != nil {
				return err
			}
		}
	}
	for i, m := range p.marks[tableAttribute] {
		if !m {
			continue
		}
		payload, err := p.entry(dict, tableAttribute, i)
		if err != nil {
			return err
		}
		if err := p.markKeyValueAndUnit(payload); err != nil {
			return err
		}
	}
	return nil
}

// entry returns the payload of entry i of table t.
func (p *PruneScratch) entry(dict []byte, t int32, i int) ([]byte, error) {
	e := p.entries[t][i]
	rd := newReader(dict[e.start:e.end], &schemaDictionary)
	if _, err := rd.nextField(); err != nil {
		return nil, err
	}
	return rd.data, nil
}

func locationRefs(n int32) int32 {
	switch n {
	case 1:
		return tableMapping
	case 4:
		return tableAttribute
	}
	return 0
}

func functionRefs(n int32) int32 {
	if n <= 3 { // name, system name, file name
		return tableString
	}
	return 0
}

func mappingRefs(n int32) int32 {
	switch n {
	case 4:
		return tableString
	case 5:
		return tableAttribute
	}
	return 0
}

// markLocation marks a location's mapping, attributes and the functions of
// its lines.
func (p *PruneScratch) markLocation(b []byte) error {
	rd := newReader(b, &schemaLocation)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		switch num {
		case 3:
			err = p.markFields(rd.data, &schemaLine, func(n int32) int32 {
				if n == 1 {
					return tableFunction
				}
				return 0
			})
		default:
			if t := locationRefs(num); t != 0 {
				err = p.markPacked(t, &rd)
			}
		}
		if err != nil {
			return err
		}
	}
}

// markKeyValueAndUnit marks the key and unit strings of an attribute table
// entry and the strings its value names.
func (p *PruneScratch) markKeyValueAndUnit(b []byte) error {
	rd := newReader(b, &schemaKeyValueAndUnit)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		switch num {
		case 1, 3:
			p.mark(tableString, rd.val)
		case 2:
			err = p.markValueStrings(rd.data, 0)
		}
		if err != nil {
			return err
		}
	}
}

// markAttrStrings marks the dictionary strings named by the attributes
// (field attrs, KeyValue messages) of a message read with s: keys given by
// key_strindex and string values given by string_value_strindex.
func (p *PruneScratch) markAttrStrings(b []byte, s *schema, attrs int32) error {
	rd := newReader(b, s)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		if num == attrs {
			if err := p.markKeyValueStrings(rd.data, 0); err != nil {
				return err
			}
		}
	}
}

func (p *PruneScratch) markKeyValueStrings(b []byte, depth int) error {
	rd := newReader(b, &schemaKeyValue)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		switch num {
		case 3: // key_strindex
			p.mark(tableString, rd.val)
		case 2:
			if err := p.markValueStrings(rd.data, depth); err != nil {
				return err
			}
		}
	}
}

// markValueStrings marks the strings an AnyValue names by
// string_value_strindex, nested values included.
func (p *PruneScratch) markValueStrings(b []byte, depth int) error {
	rd := newReader(b, &schemaAnyValue)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		switch num {
		case 8:
			p.mark(tableString, rd.val)
		case 5, 6:
			if depth >= maxDepth {
				return rd.fail(rd.start, num, errTooDeep)
			}
			inner := newReader(rd.data, &schemaArrayValue) // KeyValueList has the same layout
			for {
				n, err := inner.nextField()
				if err != nil {
					return err
				}
				if n == 0 {
					break
				}
				if n != 1 {
					continue
				}
				if num == 5 {
					err = p.markValueStrings(inner.data, depth+1)
				} else {
					err = p.markKeyValueStrings(inner.data, depth+1)
				}
				if err != nil {
					return err
				}
			}
		}
	}
}
