// SPDX-License-Identifier: Apache-2.0

package otlpwire

import "iter"

// Resource is a view of an OTLP Resource message.
type Resource struct {
	l attrList
	// dict resolves the attributes of a profiles resource (resolve.go).
	dict dictRef
}

// NewResource returns a view of b, the encoding of one Resource message.
func NewResource(b []byte) Resource {
	return Resource{l: attrList{b: b, self: &schemaResource, attrField: fieldResourceAttrs, refField: fieldEntityRefs}}
}

// Attributes iterates over the resource attributes in wire order, including
// duplicated keys. Each KeyValue is validated completely (its value
// recursively) before it is yielded, and so are the resource's other fields
// as they are reached; a malformed field ends the iteration with an error,
// after the attributes that precede it.
func (r Resource) Attributes() iter.Seq2[KeyValue, error] {
	// One closure whatever the signal, so that the iterator inlines and
	// the loop body does not escape.
	return func(yield func(KeyValue, error) bool) { r.each(yield) }
}

func (r Resource) each(yield func(KeyValue, error) bool) {
	if r.dict.on {
		dictList{l: r.l, d: r.dict}.each(yield)
		return
	}
	r.l.each(yield)
}

// Attribute returns the value of the first attribute named key, as pdata's
// Map.Get does. It validates the whole resource, so a resource pdata would
// reject yields an error whichever attribute is asked for.
func (r Resource) Attribute(key string) (Value, bool, error) {
	if r.dict.on {
		return dictList{l: r.l, d: r.dict}.get(key)
	}
	return r.l.get(key)
}

// Hash returns the HashV1 routing hash of all resource attributes. See the
// package documentation for the algorithm, which is stable across releases.
func (r Resource) Hash() (uint64, error) {
	if r.dict.on {
		return dictList{l: r.l, d: r.dict}.hash(HashV1)
	}
	return r.l.hash(HashV1)
}

// HashKeys returns the HashV1 routing hash of the attributes named in keys
// (the first occurrence of each, like Attribute) and how many of them were
// present. Keys listed twice count once; the order of keys does not matter.
// When keys names every attribute of a resource without duplicate keys,
// HashKeys equals Hash.
func (r Resource) HashKeys(keys []string) (hash uint64, found int, err error) {
	if r.dict.on {
		return dictList{l: r.l, d: r.dict}.hashKeys(HashV1, keys)
	}
	return r.l.hashKeys(HashV1, keys)
}

// HashWith is Hash computed with the routing hash of version ver. An
// undefined version returns ErrHashVersion.
func (r Resource) HashWith(ver HashVersion) (uint64, error) {
	if r.dict.on {
		return dictList{l: r.l, d: r.dict}.hash(ver)
	}
	return r.l.hash(ver)
}

// HashKeysWith is HashKeys computed with the routing hash of version ver.
// An undefined version returns ErrHashVersion.
func (r Resource) HashKeysWith(ver HashVersion, keys []string) (hash uint64, found int, err error) {
	if r.dict.on {
		return dictList{l: r.l, d: r.dict}.hashKeys(ver, keys)
	}
	return r.l.hashKeys(ver, keys)
}

// DroppedAttributesCount returns the dropped_attributes_count field.
func (r Resource) DroppedAttributesCount() (uint32, error) {
	v, err := r.l.lastScalar(2)
	return uint32(v), err
}

// InstrumentationScope is a view of an OTLP InstrumentationScope message.
type InstrumentationScope struct {
	l    attrList
	dict dictRef // as in Resource
}

// NewInstrumentationScope returns a view of b, the encoding of one
// InstrumentationScope message.
func NewInstrumentationScope(b []byte) InstrumentationScope {
	return InstrumentationScope{l: attrList{b: b, self: &schemaScope, attrField: fieldScopeAttrs}}
}

// Name returns the scope name. The slice aliases the request.
func (s InstrumentationScope) Name() ([]byte, error) { return s.l.lastBytes(1) }

// Version returns the scope version. The slice aliases the request.
func (s InstrumentationScope) Version() ([]byte, error) { return s.l.lastBytes(2) }

// Attributes iterates over the scope attributes in wire order.
func (s InstrumentationScope) Attributes() iter.Seq2[KeyValue, error] {
	return func(yield func(KeyValue, error) bool) { s.each(yield) }
}

func (s InstrumentationScope) each(yield func(KeyValue, error) bool) {
	if s.dict.on {
		dictList{l: s.l, d: s.dict}.each(yield)
		return
	}
	s.l.each(yield)
}

// Attribute returns the value of the first scope attribute named key.
func (s InstrumentationScope) Attribute(key string) (Value, bool, error) {
	if s.dict.on {
		return dictList{l: s.l, d: s.dict}.get(key)
	}
	return s.l.get(key)
}
