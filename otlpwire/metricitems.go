// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"iter"
	"math"
	"strconv"
)

// MetricType is the kind of data a metric carries. The numbers match pdata's
// pmetric.MetricType.
type MetricType uint8

// Metric types.
const (
	MetricTypeEmpty MetricType = iota
	MetricTypeGauge
	MetricTypeSum
	MetricTypeHistogram
	MetricTypeExponentialHistogram
	MetricTypeSummary
)

// String returns the name pdata uses: "Empty", "Gauge", "Sum", "Histogram",
// "ExponentialHistogram" or "Summary".
func (t MetricType) String() string {
	switch t {
	case MetricTypeEmpty:
		return "Empty"
	case MetricTypeGauge:
		return "Gauge"
	case MetricTypeSum:
		return "Sum"
	case MetricTypeHistogram:
		return "Histogram"
	case MetricTypeExponentialHistogram:
		return "ExponentialHistogram"
	case MetricTypeSummary:
		return "Summary"
	}
	return "MetricType(" + strconv.Itoa(int(t)) + ")"
}

// metricTypeOf maps a Metric data field number to its type.
func metricTypeOf(num int32) MetricType {
	switch num {
	case 5:
		return MetricTypeGauge
	case 7:
		return MetricTypeSum
	case 9:
		return MetricTypeHistogram
	case 10:
		return MetricTypeExponentialHistogram
	case 11:
		return MetricTypeSummary
	}
	return MetricTypeEmpty
}

// NumberValueType says which member of a number data point's (or an
// exemplar's) value oneof is set. The numbers match pdata's
// pmetric.NumberDataPointValueType.
type NumberValueType uint8

// Number value types.
const (
	NumberValueTypeEmpty NumberValueType = iota
	NumberValueTypeInt
	NumberValueTypeDouble
)

// String returns "Empty", "Int" or "Double", as pdata does.
func (t NumberValueType) String() string {
	switch t {
	case NumberValueTypeEmpty:
		return "Empty"
	case NumberValueTypeInt:
		return "Int"
	case NumberValueTypeDouble:
		return "Double"
	}
	return "NumberValueType(" + strconv.Itoa(int(t)) + ")"
}

// Metric is a view of one Metric message. Its data is the last of its
// gauge, sum, histogram, exponential_histogram and summary fields, as in
// pdata, which replaces (never merges) oneof members. Accessors scan the
// message and allocate nothing; byte slices alias the request.
type Metric struct{ b []byte }

// NewMetric returns a view of b, the encoding of one Metric message.
func NewMetric(b []byte) Metric { return Metric{b} }

// Bytes returns the encoded metric, without tag and length.
func (m Metric) Bytes() []byte { return m.b }

// Name returns the metric name.
func (m Metric) Name() ([]byte, error) { return lastBytes(m.b, &schemaMetric, 1) }

// Description returns the metric description.
func (m Metric) Description() ([]byte, error) { return lastBytes(m.b, &schemaMetric, 2) }

// Unit returns the metric unit.
func (m Metric) Unit() ([]byte, error) { return lastBytes(m.b, &schemaMetric, 3) }

// Metadata iterates over the metric's metadata attributes in wire order.
func (m Metric) Metadata() iter.Seq2[KeyValue, error] {
	return attrList{b: m.b, self: &schemaMetric, attrField: 12}.all()
}

// data returns the field number and payload of the effective data field
// (0 and nil when there is none), validating the metric's top level.
func (m Metric) data() (int32, []byte, error) {
	rd := newReader(m.b, &schemaMetric)
	var num int32
	var data []byte
	for {
		f, ok, err := rd.next()
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			return num, data, nil
		}
		if dataSchema(f.num) != nil {
			num, data = f.num, f.data
		}
	}
}

// Type returns the type of the metric's data.
func (m Metric) Type() (MetricType, error) {
	num, _, err := m.data()
	return metricTypeOf(num), err
}

// AggregationTemporality returns the AggregationTemporality enum number of a
// sum, histogram or exponential histogram (pmetric.AggregationTemporality:
// 0 unspecified, 1 delta, 2 cumulative); 0 for other types.
func (m Metric) AggregationTemporality() (int32, error) {
	num, data, err := m.data()
	if err != nil || num == 5 || num == 11 || num == 0 {
		return 0, err
	}
	v, err := readUint(data, dataSchema(num), 2)
	return int32(v), err
}

// IsMonotonic reports the is_monotonic field of a sum; false for other types.
func (m Metric) IsMonotonic() (bool, error) {
	num, data, err := m.data()
	if err != nil || num != 7 {
		return false, err
	}
	v, err := readUint(data, &schemaSum, 3)
	return v != 0, err
}

// DataPointCount returns the number of data points, as pdata's
// DataPointCount counts them (0 for a metric without data).
func (m Metric) DataPointCount() (int, error) { return countMetric(m.b) }

// eachPoint iterates over the data points of the metric when its data field
// is one of nums; other metrics have none of that kind.
func eachPoint[T any](m Metric, point *schema, wrap func([]byte) T, yield func(T, error) bool, nums ...int32) {
	num, data, err := m.data()
	if err != nil {
		var zero T
		yield(zero, err)
		return
	}
	for _, n := range nums {
		if n == num {
			eachMessage(data, dataSchema(num), 1, point, wrap, yield)
			return
		}
	}
}

// NumberDataPoints iterates over the data points of a gauge or a sum; it
// yields nothing for other types. Each point's top level is validated before
// it is yielded; after an error the iteration stops.
func (m Metric) NumberDataPoints() iter.Seq2[NumberDataPoint, error] {
	return func(yield func(NumberDataPoint, error) bool) {
		eachPoint(m, &schemaNumberDataPoint, func(b []byte) NumberDataPoint { return NumberDataPoint{b} }, yield, 5, 7)
	}
}

// HistogramDataPoints iterates over the data points of a histogram, like
// NumberDataPoints.
func (m Metric) HistogramDataPoints() iter.Seq2[HistogramDataPoint, error] {
	return func(yield func(HistogramDataPoint, error) bool) {
		eachPoint(m, &schemaHistogramDataPoint, func(b []byte) HistogramDataPoint { return HistogramDataPoint{b} }, yield, 9)
	}
}

// ExponentialHistogramDataPoints iterates over the data points of an
// exponential histogram, like NumberDataPoints.
func (m Metric) ExponentialHistogramDataPoints() iter.Seq2[ExponentialHistogramDataPoint, error] {
	return func(yield func(ExponentialHistogramDataPoint, error) bool) {
		eachPoint(m, &schemaExpHistogramDataPoint,
			func(b []byte) ExponentialHistogramDataPoint { return ExponentialHistogramDataPoint{b} }, yield, 10)
	}
}

// SummaryDataPoints iterates over the data points of a summary, like
// NumberDataPoints.
func (m Metric) SummaryDataPoints() iter.Seq2[SummaryDataPoint, error] {
	return func(yield func(SummaryDataPoint, error) bool) {
		eachPoint(m, &schemaSummaryDataPoint, func(b []byte) SummaryDataPoint { return SummaryDataPoint{b} }, yield, 11)
	}
}

// numberValue reads a value oneof made of a double field and an sfixed64
// field: the last occurrence of either wins.
func numberValue(b []byte, s *schema, doubleField, intField int32) (NumberValueType, uint64, error) {
	rd := newReader(b, s)
	t, v := NumberValueTypeEmpty, uint64(0)
	for {
		f, ok, err := rd.next()
		if err != nil {
			return NumberValueTypeEmpty, 0, err
		}
		if !ok {
			return t, v, nil
		}
		switch f.num {
		case doubleField:
			t, v = NumberValueTypeDouble, f.val
		case intField:
			t, v = NumberValueTypeInt, f.val
		}
	}
}

func eachExemplar(b []byte, s *schema, num int32) iter.Seq2[Exemplar, error] {
	return func(yield func(Exemplar, error) bool) {
		eachMessage(b, s, num, &schemaExemplar, func(b []byte) Exemplar { return Exemplar{b} }, yield)
	}
}

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
