// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// HashVersion identifies a routing hash algorithm (see "Routing hash" in the
// package documentation). The values of a version never change; a faster
// or better hash is added as a new version.
type HashVersion uint8

const (
	// HashV1 is the routing hash of the first releases: FNV-1a over a
	// canonical encoding of each attribute, one byte per step. Resource.Hash
	// and Resource.HashKeys compute it.
	HashV1 HashVersion = 1
	// HashV2 absorbs eight bytes per step where HashV1 takes one. It
	// shares HashV1's order independence and canonical view of values, but
	// its values differ.
	HashV2 HashVersion = 2
)

// ErrHashVersion is returned for a HashVersion this package does not define.
var ErrHashVersion = errors.New("otlpwire: unknown routing hash version")

// Valid reports whether v is a version this package defines.
func (v HashVersion) Valid() bool { return v == HashV1 || v == HashV2 }

// The constants of HashV2: the fractional parts of the square roots of 2, 3
// and 5, as 64-bit fixed-point numbers (all odd).
const (
	v2Seed    = 0x6a09e667f3bcc908 // sqrt(2)
	v2HdrMul  = 0xbb67ae8584caa73b // sqrt(3)
	v2WordMul = 0x3c6ef372fe94f82b // sqrt(5)
)

// fold multiplies a by b into 128 bits and returns the exclusive or of the
// two halves: a cheap mix in which every input bit reaches many output bits.
func fold(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// absorb2 is HashV2's step for one piece: the header (a code and a length
// or count) and then the payload, eight bytes at a time.
func absorb2(h, hdr uint64, b []byte) uint64 {
	h = header2(h, hdr)
	for len(b) > 8 {
		h = fold(h^binary.LittleEndian.Uint64(b), v2WordMul)
		b = b[8:]
	}
	return fold(h^lastWord(b), v2WordMul)
}

// header2 mixes a piece's header into h; hdr is a length or count shifted
// left by 8, or'ed with a value code.
func header2(h, hdr uint64) uint64 { return h ^ hdr*v2HdrMul }

// lastWord packs the final 0 to 8 bytes of a payload into one word. The
// reads overlap for 5 to 7 bytes; the length in the header keeps payloads
// of different lengths apart.
func lastWord(b []byte) uint64 {
	n := len(b)
	switch {
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32
	case n > 0:
		return uint64(b[0]) | uint64(b[n/2])<<8 | uint64(b[n-1])<<16
	}
	return 0
}

// attrHash2 is the HashV2 hash of one attribute.
func attrHash2(key []byte, v Value) uint64 {
	return mix64(hashValue2(absorb2(v2Seed, uint64(len(key))<<8, key), v))
}

// hashValue2 absorbs the canonical encoding of v into h. Like hashValue, it
// needs a validated v.
func hashValue2(h uint64, v Value) uint64 {
	switch v.kind {
	case ValueKindStr:
		return absorb2(h, uint64(len(v.data))<<8|codeStr, v.data)
	case ValueKindBytes:
		return absorb2(h, uint64(len(v.data))<<8|codeBytes, v.data)
	case ValueKindBool:
		// The one payload byte, b, packed as lastWord packs it.
		b := uint64(0)
		if v.num != 0 {
			b = 0x010101
		}
		return fold(header2(h, 1<<8|codeBool)^b, v2WordMul)
	case ValueKindInt:
		return fold(header2(h, 8<<8|codeInt)^v.num, v2WordMul)
	case ValueKindDouble:
		return fold(header2(h, 8<<8|codeDouble)^v.num, v2WordMul)
	case ValueKindSlice:
		n, _ := countField(v.data, &schemaArrayValue, 1)
		h = absorb2(h, uint64(n)<<8|codeArray, nil)
		for e := range v.Slice() {
			h = hashValue2(h, e)
		}
		return h
	case ValueKindMap:
		sum, n := kvlistSumOf(HashV2, v)
		return fold(header2(h, n<<8|codeKVList)^sum, v2WordMul)
	}
	return absorb2(h, codeEmpty, nil)
}

// shortAttrHash is attrHash of an attribute whose value shortScalar read
// (code != 0),
// computed from its payload without building a Value.
func shortAttrHash(ver HashVersion, key, payload []byte, code uint8) uint64 {
	if ver != HashV2 {
		return attrHash1(key, shortValueOf(payload, code))
	}
	h := absorb2(v2Seed, uint64(len(key))<<8, key)
	switch code {
	case codeStr:
		h = absorb2(h, uint64(len(payload))<<8|codeStr, payload)
	case codeInt:
		h = fold(header2(h, 8<<8|codeInt)^shortVarint(payload), v2WordMul)
	case codeBool:
		b := uint64(0)
		if payload[0] != 0 {
			b = 0x010101
		}
		h = fold(header2(h, 1<<8|codeBool)^b, v2WordMul)
	default:
		h = fold(header2(h, 8<<8|codeDouble)^binary.LittleEndian.Uint64(payload), v2WordMul)
	}
	return mix64(h)
}

// attrHash is the hash of one attribute in version ver, which must be valid.
func attrHash(ver HashVersion, key []byte, v Value) uint64 {
	if ver == HashV2 {
		return attrHash2(key, v)
	}
	return attrHash1(key, v)
}
