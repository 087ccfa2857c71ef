// SPDX-License-Identifier: Apache-2.0

package otlpwire

import "iter"

// ExponentialHistogramDataPoint is a view of one
// ExponentialHistogramDataPoint message.
type ExponentialHistogramDataPoint struct{ b []byte }

// Attributes iterates over the point's attributes (field 1) in wire order.
func (p ExponentialHistogramDataPoint) Attributes() iter.Seq2[KeyValue, error] {
	return p.attrs().all()
}

// Attribute returns the value of the first point attribute named key.
func (p ExponentialHistogramDataPoint) Attribute(key string) (Value, bool, error) {
	return p.attrs().get(key)
}

func (p ExponentialHistogramDataPoint) attrs() attrList {
	return attrList{b: p.b, self: &schemaExpHistogramDataPoint, attrField: 1}
}

// StartTimeUnixNano returns the start of the point's interval.
func (p ExponentialHistogramDataPoint) StartTimeUnixNano() (uint64, error) {
	return readUint(p.b, &schemaExpHistogramDataPoint, 2)
}

// TimeUnixNano returns the point's time.
func (p ExponentialHistogramDataPoint) TimeUnixNano() (uint64, error) {
	return readUint(p.b, &schemaExpHistogramDataPoint, 3)
}

// Count returns the number of observations.
func (p ExponentialHistogramDataPoint) Count() (uint64, error) {
	return readUint(p.b, &schemaExpHistogramDataPoint, 4)
}

// Sum returns the sum of the observations and whether it is present.
func (p ExponentialHistogramDataPoint) Sum() (float64, bool, error) {
	return readOptional(p.b, &schemaExpHistogramDataPoint, 5)
}

// Scale returns the resolution of the histogram (an sint32 on the wire).
func (p ExponentialHistogramDataPoint) Scale() (int32, error) {
	v, err := readUint(p.b, &schemaExpHistogramDataPoint, 6)
	return unzigzag32(v), err
}

// unzigzag32 decodes an sint32 the way pdata does: it shifts the whole
// varint right before keeping the low 32 bits, so bit 32 of a varint longer
// than an sint32 needs lands in bit 31 of the result.
func unzigzag32(v uint64) int32 {
	return int32(uint32(v>>1) ^ -uint32(v&1))
}

// ZeroCount returns the count of observations in the zero bucket.
func (p ExponentialHistogramDataPoint) ZeroCount() (uint64, error) {
	return readUint(p.b, &schemaExpHistogramDataPoint, 7)
}

// Positive returns the buckets of positive observations.
func (p ExponentialHistogramDataPoint) Positive() ExponentialBuckets {
	return ExponentialBuckets{b: p.b, field: 8}
}

// Negative returns the buckets of negative observations.
func (p ExponentialHistogramDataPoint) Negative() ExponentialBuckets {
	return ExponentialBuckets{b: p.b, field: 9}
}

// Flags returns the point's flags.
func (p ExponentialHistogramDataPoint) Flags() (uint32, error) {
	v, err := readUint(p.b, &schemaExpHistogramDataPoint, 10)
	return uint32(v), err
}

// Exemplars iterates over the point's exemplars in wire order.
func (p ExponentialHistogramDataPoint) Exemplars() iter.Seq2[Exemplar, error] {
	return eachExemplar(p.b, &schemaExpHistogramDataPoint, 11)
}

// Min returns the smallest observation and whether it is present.
func (p ExponentialHistogramDataPoint) Min() (float64, bool, error) {
	return readOptional(p.b, &schemaExpHistogramDataPoint, 12)
}

// Max returns the largest observation and whether it is present.
func (p ExponentialHistogramDataPoint) Max() (float64, bool, error) {
	return readOptional(p.b, &schemaExpHistogramDataPoint, 13)
}

// ZeroThreshold returns the width of the zero bucket.
func (p ExponentialHistogramDataPoint) ZeroThreshold() (float64, error) {
	return readDouble(p.b, &schemaExpHistogramDataPoint, 14)
}

// ExponentialBuckets is a view of the positive or negative buckets of an
// exponential histogram point. The message is read as the merge of all its
// occurrences, as protobuf and pdata define; an absent message has offset 0
// and no counts.
type ExponentialBuckets struct {
	b     []byte // the data point
	field int32  // 8 positive, 9 negative
}

func (e ExponentialBuckets) reader() segReader {
	return newSegReader(e.b, &schemaExpHistogramDataPoint, e.field, &schemaBuckets)
}

// Offset returns the index of the first bucket (an sint32 on the wire).
func (e ExponentialBuckets) Offset() (int32, error) {
	rd := e.reader()
	var v uint64
	for {
		f, ok, err := rd.next()
		if err != nil || !ok {
			return unzigzag32(v), err
		}
		if f.num == 1 {
			v = f.val
		}
	}
}

// BucketCounts iterates over the bucket counts, accepting packed and
// unpacked varints (all occurrences append). The buckets are validated
// before the first count is yielded.
func (e ExponentialBuckets) BucketCounts() iter.Seq2[uint64, error] {
	return func(yield func(uint64, error) bool) {
		if err := e.eachCount(func(uint64) bool { return true }); err != nil {
			yield(0, err)
			return
		}
		_ = e.eachCount(func(v uint64) bool { return yield(v, nil) })
	}
}

// eachCount calls fn for each count until fn returns false.
func (e ExponentialBuckets) eachCount(fn func(uint64) bool) error {
	rd := e.reader()
	for {
		f, ok, err := rd.next()
		if err != nil || !ok {
			return err
		}
		if f.num != 2 {
			continue
		}
		if f.typ != wireLen {
			if !fn(f.val) {
				return nil
			}
			continue
		}
		for pos := 0; pos < len(f.data); {
			v, next, err := consumeVarint(f.data, pos)
			if err != nil {
				return malformed(schemaBuckets.name, f.start, 2, err)
			}
			pos = next
			if !fn(v) {
				return nil
			}
		}
	}
}
