// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"iter"
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
