// Package otlpwire reads, counts, hashes and splits OTLP requests directly on
// their protobuf bytes, without building pdata.
//
// A Request views the bytes of an ExportTraceServiceRequest,
// ExportMetricsServiceRequest or ExportLogsServiceRequest (TracesData,
// MetricsData and LogsData share the layout). From it one reaches, without
// copying, each ResourceData (ResourceSpans, ResourceMetrics, ResourceLogs),
// its Resource and attributes (KeyValue, Value), each ScopeData with its
// InstrumentationScope, and the items: ScopeData.Spans (Span with SpanEvent,
// SpanLink and SpanStatus), ScopeData.LogRecords (LogRecord) and
// ScopeData.Metrics (Metric with NumberDataPoint, HistogramDataPoint,
// ExponentialHistogramDataPoint, SummaryDataPoint and Exemplar). Item views
// are plain byte slices: each accessor scans the item for its field, so
// reading one or two fields per item is cheap and reading all of them costs
// about what decoding with pdata does, without allocating.
//
// # Agreement with pdata
//
// Counts equal what pdata's SpanCount, DataPointCount and LogRecordCount
// report after an OTLP receiver (ptraceotlp, pmetricotlp, plogotlp
// ExportRequest.UnmarshalProto) has read the same bytes. In particular the
// deprecated field 1000 of ResourceSpans/ResourceMetrics/ResourceLogs
// (instrumentation_library_*) is read when, and only when, the resource has
// no scope in field 2; for a metric carrying several data fields the last
// one wins. Repeated occurrences of a singular message field (a resource, a
// scope, an attribute value) are merged and scalars resolve to their last
// occurrence, as protobuf and pdata define. Repeated scalars (histogram
// bucket counts and bounds, exponential bucket counts) are read packed or
// unpacked; for fixed64 fields pdata lets a packed occurrence replace the
// elements before it instead of appending to them, and otlpwire does the
// same, so even that unusual mix reads identically.
//
// # Validation
//
// Every operation validates the levels it walks: field framing (varints,
// lengths, truncation), the wire types of known fields and field numbers.
// Counting walks request, resource and scope messages, and for metrics the
// Metric and its data message; it does not look inside spans, log records or
// data points. Item iterators validate the top level of each item (or data
// point, event, link, exemplar) before yielding it, and each accessor
// validates what it reads: trace and span ids must be empty or 16 and 8
// bytes long, packed fixed64 fields a multiple of 8 bytes, as pdata
// requires. Attribute operations (Attributes, Attribute, Hash, HashKeys and
// the other accessors of Resource and InstrumentationScope) validate, in the
// same pass, every attribute of the message completely, values recursively
// and every member of a repeated value field (pdata decodes each one), and a
// Resource's entity_refs: a value pdata would reject is an error, never a
// key, a value or a hash. NewValue and log bodies are validated the same way,
// so a Value obtained from this package always renders (Value.Text) and
// hashes. Errors match ErrMalformed with errors.Is and are *ParseError values
// naming the message, byte offset and field that failed.
//
// Input that pdata accepts is never rejected, with two deliberate
// exceptions, whose errors also match ErrUnsupported: groups (wire types 3
// and 4), which proto3 producers never emit, and attribute values nested
// more than 100 arrays or kvlists deep. Input that pdata rejects deeper than
// the walked levels (say, a corrupt span) may still be counted.
//
// # Routing hash
//
// Resource.Hash and Resource.HashKeys compute a 64-bit hash of a resource's
// identity that does not depend on attribute order or on the field order
// inside KeyValue and AnyValue, so pdata (descending field order) and SDKs
// (ascending) produce the same value. Shard assignment depends on it, so the
// algorithm below is stable across releases and pinned by golden tests; a
// different hash would be a new, separately named function.
//
//  1. Each attribute is written in a canonical byte encoding:
//     uvarint(len(key)) key value, where value is one code byte followed by
//     its payload: 0 empty (also a string-table index, which pdata reads as
//     empty), nothing; 1 string, uvarint(len) bytes; 2 bool, one byte 0 or 1;
//     3 int, 8 bytes little-endian two's complement; 4 double, the 8 IEEE-754
//     bytes little-endian (bitwise: -0 and +0 differ, NaNs by payload);
//     5 array, uvarint(number of elements) then each element's value
//     encoding in order; 6 kvlist, uvarint(number of entries) then the 8-byte
//     little-endian wrapping sum of the entries' attribute hashes (step 2),
//     so entry order does not matter; 7 bytes, uvarint(len) bytes.
//  2. The attribute hash is SplitMix64's finaliser applied to the 64-bit
//     FNV-1a hash of that encoding.
//  3. The resource hash is the finaliser applied to S + n*0x9e3779b97f4a7c15,
//     where S is the wrapping sum of the attribute hashes and n the number of
//     attributes hashed: every attribute for Hash (a duplicate counts twice),
//     the first occurrence of each distinct listed key for HashKeys.
//
// Only decoded values enter the encoding, so field order inside KeyValue and
// AnyValue, non-minimal varints, unknown fields and attribute order have no
// effect. A resource without attributes hashes to 0.
//
// # Allocation
//
// Counting, iteration (items included), reading item fields, attribute
// lookup, hashing and AppendRequest into a buffer with enough capacity
// allocate nothing, as long as iterators are ranged over where they are
// made: an iterator stored in a variable of func type or passed to another
// function can make its loop body escape to the heap. Views alias the request
// bytes, which must not change while views are in use.
package otlpwire
