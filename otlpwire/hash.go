package otlpwire

// The routing hash (Resource.Hash, Resource.HashKeys) is specified in the
// package documentation, section "Routing hash"; it must not change, because
// shard assignment depends on it (TestHashGolden, TestHashMatchesSpec).

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

func fnvString(h uint64, s string) uint64 {
	h = fnvUvarint(h, uint64(len(s)))
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
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

// hashAttribute returns the attribute hash of kv (step 2).
func hashAttribute(kv KeyValue, depth int) (uint64, error) {
	v, err := kv.Value()
	if err != nil {
		return 0, err
	}
	h := fnvUvarint(fnvOffset, uint64(len(kv.key)))
	return hashKeyValue(fnvBytes(h, kv.key), v, depth)
}

// hashKeyValue finishes an attribute hash whose key is already in h.
func hashKeyValue(h uint64, v Value, depth int) (uint64, error) {
	h, err := hashValue(h, v, depth)
	if err != nil {
		return 0, err
	}
	return mix64(h), nil
}

func hashValue(h uint64, v Value, depth int) (uint64, error) {
	if depth > maxDepth {
		return 0, malformed("AnyValue", 0, 0, errTooDeep)
	}
	switch v.kind {
	case ValueKindEmpty:
		return fnvByte(h, 0), nil
	case ValueKindStr:
		h = fnvUvarint(fnvByte(h, 1), uint64(len(v.data)))
		return fnvBytes(h, v.data), nil
	case ValueKindBool:
		b := byte(0)
		if v.num != 0 {
			b = 1
		}
		return fnvByte(fnvByte(h, 2), b), nil
	case ValueKindInt:
		return fnvUint64(fnvByte(h, 3), v.num), nil
	case ValueKindDouble:
		return fnvUint64(fnvByte(h, 4), v.num), nil
	case ValueKindSlice:
		n, err := countField(v.data, &schemaArrayValue, 1)
		if err != nil {
			return 0, err
		}
		h = fnvUvarint(fnvByte(h, 5), uint64(n))
		rd := newReader(v.data, &schemaArrayValue)
		for {
			f, ok, _ := rd.next() // framing validated by countField
			if !ok {
				return h, nil
			}
			if f.num != 1 {
				continue
			}
			var e Value
			if err := e.merge(f.data); err != nil {
				return 0, err
			}
			if h, err = hashValue(h, e, depth+1); err != nil {
				return 0, err
			}
		}
	case ValueKindMap:
		rd := newReader(v.data, &schemaKeyValueList)
		var sum, n uint64
		for {
			f, ok, err := rd.next()
			if err != nil {
				return 0, err
			}
			if !ok {
				break
			}
			if f.num != 1 {
				continue
			}
			kv, err := parseKeyValue(f.data)
			if err != nil {
				return 0, err
			}
			a, err := hashAttribute(kv, depth+1)
			if err != nil {
				return 0, err
			}
			sum += a
			n++
		}
		return fnvUint64(fnvUvarint(fnvByte(h, 6), n), sum), nil
	case ValueKindBytes:
		h = fnvUvarint(fnvByte(h, 7), uint64(len(v.data)))
		return fnvBytes(h, v.data), nil
	}
	return h, nil
}
