// SPDX-License-Identifier: Apache-2.0

package otlpwire

// Views of the number, histogram and summary data points a Metric carries,
// and of the exemplars inside them; exphistogram.go has the exponential
// histogram's.

import (
	"iter"
	"math"
)

// NumberDataPoint is a view of one NumberDataPoint message (a gauge or sum
// point).
type NumberDataPoint struct{ b []byte }

// StartTimeUnixNano returns the start of the point's interval.
func (p NumberDataPoint) StartTimeUnixNano() (uint64, error) {
	return readUint(p.b, &schemaNumberDataPoint, 2)
}

// TimeUnixNano returns the point's time.
func (p NumberDataPoint) TimeUnixNano() (uint64, error) {
	return readUint(p.b, &schemaNumberDataPoint, 3)
}

// ValueType reports whether the point holds a double, an int or nothing.
func (p NumberDataPoint) ValueType() (NumberValueType, error) {
	t, _, err := numberValue(p.b, &schemaNumberDataPoint, 4, 6)
	return t, err
}

// DoubleValue returns the double value, or 0 if the point holds an int.
func (p NumberDataPoint) DoubleValue() (float64, error) {
	t, v, err := numberValue(p.b, &schemaNumberDataPoint, 4, 6)
	if t != NumberValueTypeDouble {
		return 0, err
	}
	return math.Float64frombits(v), err
}

// IntValue returns the int value (an sfixed64 on the wire), or 0 if the
// point holds a double.
func (p NumberDataPoint) IntValue() (int64, error) {
	t, v, err := numberValue(p.b, &schemaNumberDataPoint, 4, 6)
	if t != NumberValueTypeInt {
		return 0, err
	}
	return int64(v), err
}

// Exemplars iterates over the point's exemplars in wire order.
func (p NumberDataPoint) Exemplars() iter.Seq2[Exemplar, error] {
	return eachExemplar(p.b, &schemaNumberDataPoint, 5)
}

// Attributes iterates over the point's attributes in wire order.
func (p NumberDataPoint) Attributes() iter.Seq2[KeyValue, error] { return p.attrs().all() }

// Attribute returns the value of the first point attribute named key.
func (p NumberDataPoint) Attribute(key string) (Value, bool, error) { return p.attrs().get(key) }

func (p NumberDataPoint) attrs() attrList {
	return attrList{b: p.b, self: &schemaNumberDataPoint, attrField: 7}
}

// Flags returns the point's flags (a varint on the wire, unlike span flags).
func (p NumberDataPoint) Flags() (uint32, error) {
	v, err := readUint(p.b, &schemaNumberDataPoint, 8)
	return uint32(v), err
}

// HistogramDataPoint is a view of one HistogramDataPoint message.
type HistogramDataPoint struct{ b []byte }

// StartTimeUnixNano returns the start of the point's interval.
func (p HistogramDataPoint) StartTimeUnixNano() (uint64, error) {
	return readUint(p.b, &schemaHistogramDataPoint, 2)
}

// TimeUnixNano returns the point's time.
func (p HistogramDataPoint) TimeUnixNano() (uint64, error) {
	return readUint(p.b, &schemaHistogramDataPoint, 3)
}

// Count returns the number of observations.
func (p HistogramDataPoint) Count() (uint64, error) {
	return readUint(p.b, &schemaHistogramDataPoint, 4)
}

// Sum returns the sum of the observations and whether it is present.
func (p HistogramDataPoint) Sum() (float64, bool, error) {
	return readOptional(p.b, &schemaHistogramDataPoint, 5)
}

// BucketCounts iterates over the bucket counts, accepting packed and
// unpacked encodings (see the package documentation for how several packed
// occurrences combine). The point is validated before the first count.
func (p HistogramDataPoint) BucketCounts() iter.Seq2[uint64, error] {
	return eachUint64(p.b, &schemaHistogramDataPoint, 6)
}

// ExplicitBounds iterates over the bucket bounds, like BucketCounts.
func (p HistogramDataPoint) ExplicitBounds() iter.Seq2[float64, error] {
	return eachDouble(p.b, &schemaHistogramDataPoint, 7)
}

// Exemplars iterates over the point's exemplars in wire order.
func (p HistogramDataPoint) Exemplars() iter.Seq2[Exemplar, error] {
	return eachExemplar(p.b, &schemaHistogramDataPoint, 8)
}

// Attributes iterates over the point's attributes in wire order.
func (p HistogramDataPoint) Attributes() iter.Seq2[KeyValue, error] { return p.attrs().all() }

// Attribute returns the value of the first point attribute named key.
func (p HistogramDataPoint) Attribute(key string) (Value, bool, error) { return p.attrs().get(key) }

func (p HistogramDataPoint) attrs() attrList {
	return attrList{b: p.b, self: &schemaHistogramDataPoint, attrField: 9}
}

// Flags returns the point's flags.
func (p HistogramDataPoint) Flags() (uint32, error) {
	v, err := readUint(p.b, &schemaHistogramDataPoint, 10)
	return uint32(v), err
}

// Min returns the smallest observation and whether it is present.
func (p HistogramDataPoint) Min() (float64, bool, error) {
	return readOptional(p.b, &schemaHistogramDataPoint, 11)
}

// Max returns the largest observation and whether it is present.
func (p HistogramDataPoint) Max() (float64, bool, error) {
	return readOptional(p.b, &schemaHistogramDataPoint, 12)
}

// SummaryDataPoint is a view of one SummaryDataPoint message.
type SummaryDataPoint struct{ b []byte }

// StartTimeUnixNano returns the start of the point's interval.
func (p SummaryDataPoint) StartTimeUnixNano() (uint64, error) {
	return readUint(p.b, &schemaSummaryDataPoint, 2)
}

// TimeUnixNano returns the point's time.
func (p SummaryDataPoint) TimeUnixNano() (uint64, error) {
	return readUint(p.b, &schemaSummaryDataPoint, 3)
}

// Count returns the number of observations.
func (p SummaryDataPoint) Count() (uint64, error) { return readUint(p.b, &schemaSummaryDataPoint, 4) }

// Sum returns the sum of the observations.
func (p SummaryDataPoint) Sum() (float64, error) { return readDouble(p.b, &schemaSummaryDataPoint, 5) }

// QuantileValues iterates over the point's quantiles in wire order.
func (p SummaryDataPoint) QuantileValues() iter.Seq2[ValueAtQuantile, error] {
	return func(yield func(ValueAtQuantile, error) bool) {
		rd := newReader(p.b, &schemaSummaryDataPoint)
		for {
			f, ok, err := rd.next()
			if err != nil {
				yield(ValueAtQuantile{}, err)
				return
			}
			if !ok {
				return
			}
			if f.num != 6 {
				continue
			}
			q, err := parseValueAtQuantile(f.data)
			if !yield(q, err) || err != nil {
				return
			}
		}
	}
}

// Attributes iterates over the point's attributes in wire order.
func (p SummaryDataPoint) Attributes() iter.Seq2[KeyValue, error] { return p.attrs().all() }

// Attribute returns the value of the first point attribute named key.
func (p SummaryDataPoint) Attribute(key string) (Value, bool, error) { return p.attrs().get(key) }

func (p SummaryDataPoint) attrs() attrList {
	return attrList{b: p.b, self: &schemaSummaryDataPoint, attrField: 7}
}

// Flags returns the point's flags.
func (p SummaryDataPoint) Flags() (uint32, error) {
	v, err := readUint(p.b, &schemaSummaryDataPoint, 8)
	return uint32(v), err
}

// ValueAtQuantile is one decoded quantile of a summary point.
type ValueAtQuantile struct {
	// Quantile is in [0, 1]: 0.5 is the median.
	Quantile float64
	// Value is the observed value at that quantile.
	Value float64
}

func parseValueAtQuantile(b []byte) (ValueAtQuantile, error) {
	rd := newReader(b, &schemaValueAtQuantile)
	var q ValueAtQuantile
	for {
		f, ok, err := rd.next()
		if err != nil {
			return ValueAtQuantile{}, err
		}
		if !ok {
			return q, nil
		}
		switch f.num {
		case 1:
			q.Quantile = math.Float64frombits(f.val)
		case 2:
			q.Value = math.Float64frombits(f.val)
		}
	}
}

// Exemplar is a view of one Exemplar message.
type Exemplar struct{ b []byte }

// TimeUnixNano returns the time of the exemplar's observation.
func (e Exemplar) TimeUnixNano() (uint64, error) { return readUint(e.b, &schemaExemplar, 2) }

// ValueType reports whether the exemplar holds a double, an int or nothing.
func (e Exemplar) ValueType() (NumberValueType, error) {
	t, _, err := numberValue(e.b, &schemaExemplar, 3, 6)
	return t, err
}

// DoubleValue returns the double value, or 0 if the exemplar holds an int.
func (e Exemplar) DoubleValue() (float64, error) {
	t, v, err := numberValue(e.b, &schemaExemplar, 3, 6)
	if t != NumberValueTypeDouble {
		return 0, err
	}
	return math.Float64frombits(v), err
}

// IntValue returns the int value (an sfixed64), or 0 if the exemplar holds
// a double.
func (e Exemplar) IntValue() (int64, error) {
	t, v, err := numberValue(e.b, &schemaExemplar, 3, 6)
	if t != NumberValueTypeInt {
		return 0, err
	}
	return int64(v), err
}

// SpanID returns the id of the span the observation was made in.
func (e Exemplar) SpanID() ([8]byte, error) { return readSpanID(e.b, &schemaExemplar, 4) }

// TraceID returns the id of the trace the observation was made in.
func (e Exemplar) TraceID() ([16]byte, error) { return readTraceID(e.b, &schemaExemplar, 5) }

// FilteredAttributes iterates over the exemplar's filtered attributes.
func (e Exemplar) FilteredAttributes() iter.Seq2[KeyValue, error] {
	return attrList{b: e.b, self: &schemaExemplar, attrField: 7}.all()
}
