// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"errors"
	"strconv"
)

// ProfilesProtoVersion names the layout of the profiles messages otlpwire
// reads: the opentelemetry-proto release whose profiles/v1development
// messages it follows, the one pdata v1.71.0 (pprofile v0.165.0, the
// Collector v0.165 train) decodes. The profiles proto is still in
// development and its field numbers have changed between releases; see
// ErrProfilesVersion.
const ProfilesProtoVersion = "opentelemetry-proto v1.10.0 (profiles v1development)"

// ErrProfilesVersion is matched (with errors.Is) by the errors reporting
// profiles bytes laid out by another version of the profiles proto than
// ProfilesProtoVersion: a message of the profiles layout (the request, the
// dictionary and its tables, ResourceProfiles, ScopeProfiles, Profile,
// Sample and the messages the tables hold) carrying a field number that
// version does not define, or a known field with a wire type that version
// does not give it. The error is a *ParseError naming the message, the
// offset, the field and the wire type seen. A wire type pdata would reject
// also matches ErrMalformed; an undefined field number (which pdata would
// skip) does not.
var ErrProfilesVersion = errors.New("otlpwire: profiles of another proto version")

// ErrProfileTooLarge is yielded by SplitResource when a single profile,
// together with the resource and scope envelope and the dictionary it needs,
// cannot fit the size limit. It matches ErrItemTooLarge.
var ErrProfileTooLarge = &tooLargeError{"otlpwire: profile with its dictionary does not fit the size limit"}

type tooLargeError struct{ msg string }

func (e *tooLargeError) Error() string { return e.msg }
func (e *tooLargeError) Unwrap() error { return ErrItemTooLarge }

// Field numbers of the profiles layout used by the walkers.
const (
	fieldProfilesDictionary = 2  // ExportProfilesServiceRequest.dictionary
	fieldProfileSampleType  = 1  // Profile.sample_type
	fieldProfileSamples     = 2  // Profile.samples
	fieldProfilePeriodType  = 5  // Profile.period_type
	fieldProfileAttrs       = 11 // Profile.attribute_indices
	fieldSampleStack        = 1  // Sample.stack_index
	fieldSampleAttrs        = 2  // Sample.attribute_indices
	fieldSampleLink         = 3  // Sample.link_index
)

// Dictionary tables, by their field number in ProfilesDictionary.
const (
	tableMapping   = 1
	tableLocation  = 2
	tableFunction  = 3
	tableLink      = 4
	tableString    = 5
	tableAttribute = 6
	tableStack     = 7
	numTables      = 7
)

// strictSchema returns the schema of a message of the profiles layout:
// every field number known does not list is refused.
func strictSchema(name string, known [17]uint8) schema {
	for i := 1; i < len(known); i++ {
		if known[i] == expNone {
			known[i] = expRefused
		}
	}
	return schema{name: name, known: known, strict: true}
}

// The profiles layout of ProfilesProtoVersion.
var (
	schemaProfilesRequest  = strictSchema("ExportProfilesServiceRequest", [17]uint8{1: expLen, 2: expLen})
	schemaResourceProfiles = strictSchema("ResourceProfiles", [17]uint8{1: expLen, 2: expLen, 3: expLen})
	schemaScopeProfiles    = strictSchema("ScopeProfiles", [17]uint8{1: expLen, 2: expLen, 3: expLen})
	schemaProfile          = strictSchema("Profile", [17]uint8{1: expLen, 2: expLen, 3: expI64, 4: expVarint,
		5: expLen, 6: expVarint, 7: expLen, 8: expVarint, 9: expLen, 10: expLen, 11: expPackedVarint})
	schemaSample = strictSchema("Sample", [17]uint8{1: expVarint, 2: expPackedVarint, 3: expVarint,
		4: expPackedVarint, 5: expPackedI64})
	schemaDictionary = strictSchema("ProfilesDictionary", [17]uint8{1: expLen, 2: expLen, 3: expLen,
		4: expLen, 5: expLen, 6: expLen, 7: expLen})
	schemaMapping = strictSchema("Mapping", [17]uint8{1: expVarint, 2: expVarint, 3: expVarint,
		4: expVarint, 5: expPackedVarint})
	schemaLocation = strictSchema("Location", [17]uint8{1: expVarint, 2: expVarint, 3: expLen,
		4: expPackedVarint})
	schemaLine     = strictSchema("Line", [17]uint8{1: expVarint, 2: expVarint, 3: expVarint})
	schemaFunction = strictSchema("Function", [17]uint8{1: expVarint, 2: expVarint, 3: expVarint,
		4: expVarint})
	schemaLink            = strictSchema("Link", [17]uint8{1: expLen, 2: expLen})
	schemaKeyValueAndUnit = strictSchema("KeyValueAndUnit", [17]uint8{1: expVarint, 2: expLen, 3: expVarint})
	schemaValueType       = strictSchema("ValueType", [17]uint8{1: expVarint, 2: expVarint})
	schemaStack           = strictSchema("Stack", [17]uint8{1: expPackedVarint})
)

// tableSchema returns the schema of the entries of dictionary table t.
func tableSchema(t int32) *schema {
	switch t {
	case tableMapping:
		return &schemaMapping
	case tableLocation:
		return &schemaLocation
	case tableFunction:
		return &schemaFunction
	case tableLink:
		return &schemaLink
	case tableAttribute:
		return &schemaKeyValueAndUnit
	case tableStack:
		return &schemaStack
	}
	return nil // strings
}

// versionReason is the reason of a ParseError reporting a field of the
// profiles layout that ProfilesProtoVersion does not define, or defines with
// another wire type.
type versionReason struct {
	num      int32
	seen     uint8 // wire type
	expected uint8 // expectation of the pinned layout
}

// versionReason describes field num of a message read with s, whose tag
// starts at off in b.
func (s *schema) versionReason(num int32, b []byte, off int) *versionReason {
	tag, _, _ := consumeVarint(b, off)
	e := uint8(expRefused)
	if uint32(num) < uint32(len(s.known)) {
		e = s.known[num]
	}
	return &versionReason{num: num, seen: uint8(tag & 7), expected: e}
}

var wireNames = [...]string{wireVarint: "VARINT", wireI64: "I64", wireLen: "LEN", wireStartGroup: "SGROUP",
	wireEndGroup: "EGROUP", wireI32: "I32", 6: "wire type 6", 7: "wire type 7"}

var expNames = [...]string{expVarint: "VARINT", expI64: "I64", expLen: "LEN", expI32: "I32",
	expPackedI64: "I64 or packed LEN", expPackedVarint: "VARINT or packed LEN"}

func (v *versionReason) Error() string {
	s := "field " + strconv.Itoa(int(v.num)) + " with wire type " + wireNames[v.seen&7]
	if v.expected == expRefused {
		return s + ", a field number the pinned layout (" + ProfilesProtoVersion + ") does not define"
	}
	return s + ", where the pinned layout (" + ProfilesProtoVersion + ") has " + expNames[v.expected]
}
