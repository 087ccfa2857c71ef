// SPDX-License-Identifier: Apache-2.0

package otlpwire

// PruneScratch holds the buffers AppendRequestPruned reuses from one call to
// the next: an index of the dictionary's entries and a mark per entry. Its
// zero value is ready to use; it must not be used by two calls at once.
type PruneScratch struct {
	entries [numTables + 1][]entryRef
	marks   [numTables + 1][]bool
}

// entryRef locates one dictionary table entry, its field tag included, in
// ResourceData.dict.
type entryRef struct{ start, end uint32 }

// AppendRequestPruned appends to dst a complete ExportProfilesServiceRequest
// holding the profiles resource d with a dictionary pruned to what d
// references, and returns the extended slice; for other signals it is
// AppendRequest. Index i of every table keeps its meaning, so not one sample
// is re-encoded: each entry d references (directly, or through a stack, a
// location, a mapping or an attribute; entry 0 always) is copied verbatim,
// each other entry below the last referenced one becomes an empty entry of
// two bytes, and each table ends after its last referenced entry.
//
// It reads all of d (every sample and every entry it references, validated
// against the pinned layout) and the dictionary's top level; on an error
// dst is returned unchanged with an error matching ErrMalformed or
// ErrProfilesVersion. Indices outside their table reference nothing. With
// scratch (which may not be nil) grown by earlier calls and dst large
// enough, it allocates nothing.
func AppendRequestPruned(dst []byte, d ResourceData, scratch *PruneScratch) ([]byte, error) {
	if d.sig != SignalProfiles {
		if !d.sig.Valid() {
			return dst, ErrUnknownSignal
		}
		return AppendRequest(dst, d), nil
	}
	p := scratch
	if err := p.index(d); err != nil {
		return dst, err
	}
	if err := p.markResource(d.b); err != nil {
		return dst, err
	}
	if err := p.close(d.dict); err != nil {
		return dst, err
	}
	size := 0
	for t := int32(1); t <= numTables; t++ {
		for i, e := range p.entries[t][:p.last(t)] {
			if p.marks[t][i] {
				size += int(e.end - e.start)
			} else {
				size += 2
			}
		}
	}
	dst = AppendResource(dst, d)
	if size == 0 {
		return dst, nil
	}
	dst = append(dst, fieldProfilesDictionary<<3|wireLen)
	dst = appendVarint(dst, uint64(size))
	for t := int32(1); t <= numTables; t++ {
		for i, e := range p.entries[t][:p.last(t)] {
			if p.marks[t][i] {
				dst = append(dst, d.dict[e.start:e.end]...)
			} else {
				dst = append(dst, byte(t<<3|wireLen), 0)
			}
		}
	}
	return dst, nil
}

// last returns the number of entries of table t the pruned table keeps.
func (p *PruneScratch) last(t int32) int {
	m := p.marks[t]
	for i := len(m) - 1; i >= 0; i-- {
		if m[i] {
			return i + 1
		}
	}
	return 0
}

// index records where every entry of every table of d's dictionary is, and
// clears the marks, marking entry 0 of each table.
func (p *PruneScratch) index(d ResourceData) error {
	for t := range p.entries {
		p.entries[t] = p.entries[t][:0]
	}
	if !d.span {
		if err := p.indexPayload(d.dict, 0); err != nil {
			return err
		}
	} else {
		rd := newReader(d.dict, &schemaProfilesRequest)
		for {
			num, err := rd.nextField()
			if err != nil {
				return err
			}
			if num == 0 {
				break
			}
			if num == fieldProfilesDictionary {
				if err := p.indexPayload(rd.data, rd.pos-len(rd.data)); err != nil {
					return err
				}
			}
		}
	}
	for t := range p.marks {
		n := len(p.entries[t])
		if cap(p.marks[t]) < n {
			p.marks[t] = make([]bool, n)
		}
		p.marks[t] = p.marks[t][:n]
		clear(p.marks[t])
		if n > 0 {
			p.marks[t][0] = true
		}
	}
	return nil
}

// indexPayload indexes the tables of one dictionary message that starts at
// offset base of the dictionary bytes.
func (p *PruneScratch) indexPayload(b []byte, base int) error {
	rd := newReader(b, &schemaDictionary)
	for {
		num, err := rd.nextField()
		if err != nil {
			return err
		}
		if num == 0 {
			return nil
		}
		p.entries[num] = append(p.entries[num], entryRef{uint32(base + rd.start), uint32(base + rd.pos)})
	}
}

// mark marks entry v of table t, an index as read from a varint (pdata
// keeps its low 32 bits); an index outside the table marks nothing.
func (p *PruneScratch) mark(t int32, v uint64) {
	i := int32(v)
	if i >= 0 && int(i) < len(p.marks[t]) {
		p.marks[t][i] = true
	}
}

// markPacked marks the entries of table t that the repeated int32 field f
// (packed, or one element) lists.
func (p *PruneScratch) markPacked(t int32, rd *reader) error {
	if rd.typ != wireLen {
		p.mark(t, rd.val)
		return nil
	}
	b := rd.data
	for pos := 0; pos < len(b); {
		v, next, err := consumeVarint(b, pos)
		if err != nil {
			return rd.fail(rd.start, 0, err)
		}
		p.mark(t, v)
		pos = next
	}
	return nil
}

// markResource marks what a ResourceProfiles references: strings named by
// its resource's and scopes' attributes, and everything its profiles and
// samples reference.
func (p *PruneScratch) markResource(b []byte) error {
	rd := newReader(b, &schemaResourceProfiles)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		switch num {
		case fieldResource:
			err = p.markAttrStrings(rd.data, &schemaResource, fieldResourceAttrs)
		case fieldScopes:
			err = p.markScope(rd.data)
		}
		if err != nil {
			return err
		}
	}
}

func (p *PruneScratch) markScope(b []byte) error {
	rd := newReader(b, &schemaScopeProfiles)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		switch num {
		case fieldScope:
			err = p.markAttrStrings(rd.data, &schemaScope, fieldScopeAttrs)
		case fieldItems:
			err = p.markProfile(rd.data)
		}
		if err != nil {
			return err
		}
	}
}

func (p *PruneScratch) markProfile(b []byte) error {
	rd := newReader(b, &schemaProfile)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		switch num {
		case fieldProfileSampleType, fieldProfilePeriodType:
			err = p.markFields(rd.data, &schemaValueType, func(n int32) int32 { return tableString })
		case fieldProfileAttrs:
			err = p.markPacked(tableAttribute, &rd)
		case fieldProfileSamples:
			err = p.markFields(rd.data, &schemaSample, sampleRefs)
		}
		if err != nil {
			return err
		}
	}
}

// sampleRefs maps a Sample field to the table it indexes (0: none).
func sampleRefs(n int32) int32 {
	switch n {
	case fieldSampleStack:
		return tableStack
	case fieldSampleAttrs:
		return tableAttribute
	case fieldSampleLink:
		return tableLink
	}
	return 0
}

// markFields reads a message with schema s and marks, for each field whose
// number refs maps to a table, the entries it lists.
func (p *PruneScratch) markFields(b []byte, s *schema, refs func(int32) int32) error {
	rd := newReader(b, s)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		if t := refs(num); t != 0 {
			if err := p.markPacked(t, &rd); err != nil {
				return err
			}
		}
	}
}
