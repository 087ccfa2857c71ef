// SPDX-License-Identifier: Apache-2.0

package otlpwire

import "errors"

// In a profiles request the resource and scope attributes may name their
// keys and string values by index into the dictionary's string table
// (KeyValue.key_strindex, AnyValue.string_value_strindex); pdata's
// marshaller always writes them that way, and its unmarshaller resolves
// them. The views of a profiles resource and its scopes resolve them too,
// so that their attributes, lookups and hashes equal those of the same
// resource sent as traces, metrics or logs.

// errStrindex reports a string-table index that pdata refuses: negative,
// beyond the table, or set beside a key.
var errStrindex = errors.New("string table index out of range or beside a key")

// dictRef is the dictionary of a profiles resource, as ResourceData holds
// it; on is set for the attribute lists that resolve through it.
type dictRef struct {
	b    []byte
	span bool
	on   bool
}

// eachString calls fn with the entries of the string table in order until
// fn returns false.
func (d dictRef) eachString(fn func(i int, s []byte) bool) error {
	i := 0
	walk := func(payload []byte) (bool, error) {
		rd := newReader(payload, &schemaDictionary)
		for {
			num, err := rd.nextField()
			if err != nil || num == 0 {
				return true, err
			}
			if num == tableString {
				if !fn(i, rd.data) {
					return false, nil
				}
				i++
			}
		}
	}
	if !d.span {
		_, err := walk(d.b)
		return err
	}
	rd := newReader(d.b, &schemaProfilesRequest)
	for {
		num, err := rd.nextField()
		if err != nil || num == 0 {
			return err
		}
		if num == fieldProfilesDictionary {
			if more, err := walk(rd.data); err != nil || !more {
				return err
			}
		}
	}
}

// batch is the size of the groups of attributes whose references one walk
// over the string table resolves.
const batch = 32

// resolvedAttr is one attribute of a batch: its encoding, its key and
// value, and the string-table indexes to resolve them from (-1: none).
type resolvedAttr struct {
	raw        []byte
	key        []byte
	v          Value
	kref, vref int64
}

// dictList is an attribute list of a profiles resource or scope (or of a
// kvlist nested in one) with the dictionary it resolves through; p, when
// set, points to a copy of d for the nested values to share. The other
// attribute lists do without it, so that they stay as small as they were.
type dictList struct {
	l attrList
	d dictRef
	p *dictRef
}

// each is attrList.each, resolved.
func (dl dictList) each(yield func(KeyValue, error) bool) {
	stopped := false
	err := dl.eachResolved(func(key []byte, v Value, raw []byte, str bool) bool {
		kv := KeyValue{key: key, b: raw, dict: v.dict}
		if str {
			kv = KeyValue{key: key, b: v.data, str: true}
		}
		stopped = !yield(kv, nil)
		return !stopped
	})
	if err != nil && !stopped {
		yield(KeyValue{}, err)
	}
}

func (dl dictList) get(key string) (Value, bool, error) {
	_, v, ok, err := dl.find(key)
	return v, ok, err
}

// hashKeys is attrList.hashKeys, resolved: one lookup per distinct key.
func (dl dictList) hashKeys(ver HashVersion, keys []string) (uint64, int, error) {
	if !ver.Valid() {
		return 0, 0, ErrHashVersion
	}
	sum, n, err := hashEachKey(ver, keys, dl.find)
	if err != nil {
		return 0, 0, err
	}
	if len(keys) == 0 {
		// Validate as the other reads do, even with nothing to look up.
		if _, _, _, err := dl.find(""); err != nil {
			return 0, 0, err
		}
	}
	return finishHash(sum, n), int(n), nil
}

// eachResolved reads the whole list like attrList.each, and calls fn with
// every attribute in order, its key and string value resolved through the
// dictionary; str tells that the value came from the string table. fn
// returning false stops the walk (without validating the rest).
func (dl dictList) eachResolved(fn func(key []byte, v Value, raw []byte, str bool) bool) error {
	l := dl.l
	var group [batch]resolvedAttr
	n := 0
	flush := func() (bool, error) {
		if err := dl.d.resolve(group[:n]); err != nil {
			return false, err
		}
		for i := range group[:n] {
			a := &group[i]
			if !fn(a.key, a.v, a.raw, a.vref >= 0) {
				return false, nil
			}
		}
		n = 0
		return true, nil
	}
	rd := l.reader()
	for {
		num, err := rd.nextField()
		if err != nil {
			return err
		}
		if num == 0 {
			_, err := flush()
			return err
		}
		data := rd.inner.data
		if num != l.attrField {
			if err := l.check(num, data); err != nil {
				return err
			}
			continue
		}
		key, v, err := parseKV(data, 0)
		if err != nil {
			return err
		}
		if v.kind == ValueKindSlice || v.kind == ValueKindMap {
			if dl.p == nil {
				dl.p = new(dictRef)
				*dl.p = dl.d
			}
			v.dict = dl.p
			if err := checkNested(v); err != nil {
				return err
			}
		}
		a := resolvedAttr{raw: data, key: key, v: v, kref: -1, vref: -1}
		// key_strindex is an int32: pdata keeps the low 32 bits of the
		// varint, so a value whose low bits are 0 names no string.
		if k := int32(keyStrindex(data)); k != 0 {
			if len(key) != 0 || k < 0 {
				return malformed("KeyValue", 0, 3, errStrindex)
			}
			a.kref = int64(k)
		}
		if v.ref {
			if int32(v.num) < 0 {
				return malformed("AnyValue", 0, 8, errStrindex)
			}
			a.vref = int64(int32(v.num))
		}
		group[n] = a
		n++
		if n == batch {
			if more, err := flush(); err != nil || !more {
				return err
			}
		}
	}
}

// keyStrindex returns the last key_strindex of a validated KeyValue.
func keyStrindex(b []byte) uint64 {
	rd := newReader(b, &schemaKeyValue)
	var k uint64
	for {
		num, _ := rd.nextField()
		if num == 0 {
			return k
		}
		if num == 3 {
			k = rd.val
		}
	}
}

// resolve replaces the references of group by the strings they name, in
// one walk over the string table; an index beyond it is an error.
func (d dictRef) resolve(group []resolvedAttr) error {
	// The wanted indexes in ascending order, each with its slot: 2j for
	// the key of group[j], 2j+1 for its value.
	var want [2 * batch]struct{ idx, slot int64 }
	n := 0
	add := func(idx, slot int64) {
		k := n
		for k > 0 && want[k-1].idx > idx {
			want[k] = want[k-1]
			k--
		}
		want[k].idx, want[k].slot = idx, slot
		n++
	}
	for j := range group {
		if group[j].kref >= 0 {
			add(group[j].kref, 2*int64(j))
		}
		if group[j].vref >= 0 {
			add(group[j].vref, 2*int64(j)+1)
		}
	}
	if n == 0 {
		return nil
	}
	next := 0
	err := d.eachString(func(i int, s []byte) bool {
		for next < n && want[next].idx == int64(i) {
			a := &group[want[next].slot/2]
			if want[next].slot%2 == 0 {
				a.key = s
			} else {
				a.v = Value{kind: ValueKindStr, data: s}
			}
			next++
		}
		return next < n
	})
	if err != nil {
		return err
	}
	if next < n {
		return malformed("KeyValue", 0, 0, errStrindex)
	}
	return nil
}

// find is attrList.find, resolved.
func (dl dictList) find(key string) ([]byte, Value, bool, error) {
	var foundKey []byte
	var found Value
	seen := false
	err := dl.eachResolved(func(k []byte, v Value, _ []byte, _ bool) bool {
		if !seen && string(k) == key {
			foundKey, found, seen = k, v, true
		}
		return true
	})
	if err != nil {
		return nil, Value{}, false, err
	}
	return foundKey, found, seen, nil
}

// hash is attrList.hash, resolved.
func (dl dictList) hash(ver HashVersion) (uint64, error) {
	if !ver.Valid() {
		return 0, ErrHashVersion
	}
	var sum, n uint64
	err := dl.eachResolved(func(k []byte, v Value, _ []byte, _ bool) bool {
		sum += attrHash(ver, k, v)
		n++
		return true
	})
	if err != nil {
		return 0, err
	}
	return finishHash(sum, n), nil
}
