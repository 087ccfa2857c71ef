// SPDX-License-Identifier: Apache-2.0

package otlpwire

import "iter"

// maxDepth bounds the nesting of array and kvlist values that Value walks
// recursively, so hostile input cannot exhaust the stack.
const maxDepth = 100

// segReader reads the fields of a message that may be spread over several
// occurrences of one field of a container: protobuf merges repeated
// occurrences of a singular message field, which is the same as reading
// their concatenation.
type segReader struct {
	outer  reader
	inner  reader
	field  int32
	active bool
}

func newSegReader(b []byte, outer *schema, container int32, inner *schema) segReader {
	if container == 0 {
		return segReader{inner: newReader(b, inner), active: true}
	}
	return segReader{outer: newReader(b, outer), field: container, inner: reader{s: inner}}
}

// nextField is reader.nextField across the segments: the current field is
// in s.inner.
func (s *segReader) nextField() (int32, error) {
	for {
		if s.active {
			num, err := s.inner.nextField()
			if err != nil || num != 0 {
				return num, err
			}
			s.active = false
		}
		if s.field == 0 {
			return 0, nil
		}
		num, err := s.outer.nextField()
		if err != nil || num == 0 {
			return 0, err
		}
		if num == s.field {
			s.inner = reader{b: s.outer.data, s: s.inner.s}
			s.active = true
		}
	}
}

// nextShort reads the next field of the active segment when it is the LEN
// field whose tag byte is tag and its length fits one byte, the common case
// of an attribute, without the schema reader; ok is false otherwise, and
// nothing is consumed.
func (s *segReader) nextShort(tag byte) (data []byte, ok bool) {
	b, p := s.inner.b, s.inner.pos
	if !s.active || p+2 > len(b) || b[p] != tag || b[p+1] >= 0x80 {
		return nil, false
	}
	end := p + 2 + int(b[p+1])
	if end > len(b) {
		return nil, false
	}
	s.inner.pos = end
	return b[p+2 : end : end], true
}

func (s *segReader) next() (field, bool, error) {
	for {
		if s.active {
			f, ok, err := s.inner.next()
			if err != nil || ok {
				return f, ok, err
			}
			s.active = false
		}
		if s.field == 0 {
			return field{}, false, nil
		}
		of, ok, err := s.outer.next()
		if err != nil || !ok {
			return field{}, false, err
		}
		if of.num == s.field {
			s.inner = newReader(of.data, s.inner.s)
			s.active = true
		}
	}
}

// attrList is what Resource, InstrumentationScope and the items have in
// common: a message (possibly merged from several occurrences) with a
// repeated KeyValue field.
//
// Every operation on an attrList validates, in the same pass, each
// attribute it meets completely (the value recursively, as pdata unmarshals
// it) and the nested messages named by refField, so that a value pdata
// would reject is an error and never a key, a value or a hash.
type attrList struct {
	b         []byte
	outer     *schema // schema of the container, when container != 0
	container int32   // field of the container holding the message; 0: b is the message
	self      *schema
	attrField int32
	refField  int32 // Resource.entity_refs: validated as EntityRef messages; 0: none
}

func (l attrList) reader() segReader {
	return newSegReader(l.b, l.outer, l.container, l.self)
}

// attrTag is the tag byte of the attribute field with a LEN payload (the
// attribute fields of OTLP are all below 16, so the tag is one byte).
func (l attrList) attrTag() byte { return byte(l.attrField<<3 | wireLen) }

// check validates a field of the list that is not an attribute.
func (l attrList) check(num int32, data []byte) error {
	if num == l.refField && l.refField != 0 {
		return validate(data, &schemaEntityRef)
	}
	return nil
}

func (l attrList) all() iter.Seq2[KeyValue, error] {
	return func(yield func(KeyValue, error) bool) { l.each(yield) }
}

func (l attrList) each(yield func(KeyValue, error) bool) {
	rd := l.reader()
	for {
		num, err := rd.nextField()
		if err == nil && num != 0 {
			data := rd.inner.data
			if num == l.attrField {
				var key []byte
				if key, _, err = parseKV(data, 0); err == nil {
					if !yield(KeyValue{key: key, b: data}, nil) {
						return
					}
					continue
				}
			} else {
				err = l.check(num, data)
			}
		}
		if err != nil {
			yield(KeyValue{}, err)
			return
		}
		if num == 0 {
			return
		}
	}
}

// get returns the value of the first attribute named key. It reads the
// whole list, validating every attribute, so the answer does not depend on
// where the malformed part of a message lies.
func (l attrList) get(key string) (Value, bool, error) {
	_, v, ok, err := l.find(key)
	return v, ok, err
}

// find is get that also returns the key as it lies in the message.
//
// find, hash and hashKeys each spell out their field loop rather than share
// a helper that takes the reader: passing &rd to a function keeps the
// reader in memory instead of registers for the whole loop, which cost 4% to
// 10% more instructions per request (cachegrind, wirebench's lookup and
// hash on 10 resources of 10 attributes).
func (l attrList) find(key string) ([]byte, Value, bool, error) {
	rd := l.reader()
	tag := l.attrTag()
	var foundKey []byte
	var found Value
	seen := false
	for {
		data, ok := rd.nextShort(tag)
		if ok {
			if k, val, ok := splitKV(data); ok {
				if p, code := shortScalar(val); code != 0 {
					if !seen && string(k) == key {
						foundKey, found, seen = k, shortValueOf(p, code), true
					}
					continue
				}
			}
		} else {
			num, err := rd.nextField()
			if err != nil {
				return nil, Value{}, false, err
			}
			if num == 0 {
				return foundKey, found, seen, nil
			}
			if num != l.attrField {
				if err := l.check(num, rd.inner.data); err != nil {
					return nil, Value{}, false, err
				}
				continue
			}
			data = rd.inner.data
		}
		k, v, err := parseKV(data, 0)
		if err != nil {
			return nil, Value{}, false, err
		}
		if !seen && string(k) == key {
			foundKey, found, seen = k, v, true
		}
	}
}

func (l attrList) hash(ver HashVersion) (uint64, error) {
	if !ver.Valid() {
		return 0, ErrHashVersion
	}
	rd := l.reader()
	tag := l.attrTag()
	var sum, n uint64
	for {
		data, ok := rd.nextShort(tag)
		if ok {
			if k, val, ok := splitKV(data); ok {
				if p, code := shortScalar(val); code != 0 {
					sum += shortAttrHash(ver, k, p, code)
					n++
					continue
				}
			}
		} else {
			num, err := rd.nextField()
			if err != nil {
				return 0, err
			}
			if num == 0 {
				return finishHash(sum, n), nil
			}
			if num != l.attrField {
				if err := l.check(num, rd.inner.data); err != nil {
					return 0, err
				}
				continue
			}
			data = rd.inner.data
		}
		k, v, err := parseKV(data, 0)
		if err != nil {
			return 0, err
		}
		sum += attrHash(ver, k, v)
		n++
	}
}

// hashKeys reads the list once, whatever the number of keys (up to 64; a
// longer list falls back to one lookup per key).
func (l attrList) hashKeys(ver HashVersion, keys []string) (uint64, int, error) {
	if !ver.Valid() {
		return 0, 0, ErrHashVersion
	}
	if len(keys) > 64 {
		return l.hashKeysEach(ver, keys)
	}
	rd := l.reader()
	tag := l.attrTag()
	var sum, n, seen uint64
	for {
		data, ok := rd.nextShort(tag)
		if !ok {
			num, err := rd.nextField()
			if err != nil {
				return 0, 0, err
			}
			if num == 0 {
				return finishHash(sum, n), int(n), nil
			}
			if num != l.attrField {
				if err := l.check(num, rd.inner.data); err != nil {
					return 0, 0, err
				}
				continue
			}
			data = rd.inner.data
		}
		k, v, err := parseKV(data, 0)
		if err != nil {
			return 0, 0, err
		}
		// The first index of k in keys stands for every listed copy of it.
		i := -1
		for j, key := range keys {
			if key == string(k) {
				i = j
				break
			}
		}
		if i < 0 || seen&(1<<i) != 0 {
			continue
		}
		seen |= 1 << i
		sum += attrHash(ver, k, v)
		n++
	}
}

func (l attrList) hashKeysEach(ver HashVersion, keys []string) (uint64, int, error) {
	sum, n, err := hashEachKey(ver, keys, l.find)
	if err != nil {
		return 0, 0, err
	}
	return finishHash(sum, n), int(n), nil
}

// hashEachKey sums the hashes of the attributes find returns for each
// distinct key of keys, and counts them.
func hashEachKey(ver HashVersion, keys []string, find func(string) ([]byte, Value, bool, error)) (sum, n uint64, err error) {
outer:
	for i, k := range keys {
		for _, prev := range keys[:i] {
			if prev == k {
				continue outer
			}
		}
		key, v, ok, err := find(k)
		if err != nil {
			return 0, 0, err
		}
		if ok {
			sum += attrHash(ver, key, v)
			n++
		}
	}
	return sum, n, nil
}

// lastField returns the last occurrence of field num, after validating the
// whole list as the other attrList operations do.
func (l attrList) lastField(num int32) (field, error) {
	rd := l.reader()
	var last field
	for {
		f, ok, err := rd.next()
		if err != nil {
			return field{}, err
		}
		if !ok {
			return last, nil
		}
		if f.num == num {
			last = f
		}
		if f.num == l.attrField {
			_, _, err = parseKV(f.data, 0)
		} else {
			err = l.check(f.num, f.data)
		}
		if err != nil {
			return field{}, err
		}
	}
}

func (l attrList) lastScalar(num int32) (uint64, error) {
	f, err := l.lastField(num)
	return f.val, err
}

func (l attrList) lastBytes(num int32) ([]byte, error) {
	f, err := l.lastField(num)
	return f.data, err
}
