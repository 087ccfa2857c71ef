// SPDX-License-Identifier: Apache-2.0

package otlpwire

// HashV1, the routing hash of Resource.Hash and Resource.HashKeys, is
// specified in the package documentation, section "Routing hash"; its values
// must not change, because shard assignment depends on them (TestHashGolden,
// TestHashMatchesSpec). HashV2 is in hash2.go.

const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
	golden    = 0x9e3779b97f4a7c15
)

func fnvByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime }

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

func fnvUvarint(h, v uint64) uint64 {
	for v >= 0x80 {
		h = fnvByte(h, byte(v)|0x80)
		v >>= 7
	}
	return fnvByte(h, byte(v))
}

func fnvUint64(h, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h = fnvByte(h, byte(v>>(8*i)))
	}
	return h
}

// mix64 is the SplitMix64 finaliser.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func finishHash(sum, n uint64) uint64 { return mix64(sum + n*golden) }

// Value codes of the canonical encoding, shared by both versions.
const (
	codeEmpty = iota
	codeStr
	codeBool
	codeInt
	codeDouble
	codeArray
	codeKVList
	codeBytes
)

// attrHash1 is the HashV1 hash of one attribute.
func attrHash1(key []byte, v Value) uint64 {
	return mix64(hashValue(fnvBytes(fnvUvarint(fnvOffset, uint64(len(key))), key), v))
}

// hashValue appends the HashV1 byte encoding of v to the FNV-1a
// state h. v must come from a validated source (parseKV, NewValue, or a
// value nested in one), so reading it cannot fail.
func hashValue(h uint64, v Value) uint64 {
	switch v.kind {
	case ValueKindEmpty:
		return fnvByte(h, codeEmpty)
	case ValueKindStr:
		h = fnvUvarint(fnvByte(h, codeStr), uint64(len(v.data)))
		return fnvBytes(h, v.data)
	case ValueKindBool:
		b := byte(0)
		if v.num != 0 {
			b = 1
		}
		return fnvByte(fnvByte(h, codeBool), b)
	case ValueKindInt:
		return fnvUint64(fnvByte(h, codeInt), v.num)
	case ValueKindDouble:
		return fnvUint64(fnvByte(h, codeDouble), v.num)
	case ValueKindSlice:
		n, _ := countField(v.data, &schemaArrayValue, 1)
		h = fnvUvarint(fnvByte(h, codeArray), uint64(n))
		for e := range v.Slice() {
			h = hashValue(h, e)
		}
		return h
	case ValueKindMap:
		sum, n := kvlistSumOf(HashV1, v)
		return fnvUint64(fnvUvarint(fnvByte(h, codeKVList), n), sum)
	case ValueKindBytes:
		h = fnvUvarint(fnvByte(h, codeBytes), uint64(len(v.data)))
		return fnvBytes(h, v.data)
	}
	return h
}

// kvlistSumOf is kvlistSum of a kvlist value, resolving the references of
// one from a profiles resource or scope.
func kvlistSumOf(ver HashVersion, v Value) (sum, n uint64) {
	if v.dict == nil {
		return kvlistSum(ver, v.data)
	}
	l := attrList{b: v.data, self: &schemaKeyValueList, attrField: 1}
	_ = dictList{l: l, d: *v.dict, p: v.dict}.eachResolved(func(k []byte, e Value, _ []byte, _ bool) bool {
		sum += attrHash(ver, k, e)
		n++
		return true
	})
	return sum, n
}

// kvlistSum returns the wrapping sum of the attribute hashes (version ver)
// of the entries of a validated kvlist value, and their number.
func kvlistSum(ver HashVersion, data []byte) (sum, n uint64) {
	rd := newReader(data, &schemaKeyValueList)
	for {
		f, ok, _ := rd.next()
		if !ok {
			return sum, n
		}
		if f.num != 1 {
			continue
		}
		kv, _ := parseKeyValue(f.data)
		e, _ := kv.Value()
		sum += attrHash(ver, kv.key, e)
		n++
	}
}
