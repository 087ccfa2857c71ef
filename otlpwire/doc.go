// Package otlpwire reads, counts, hashes and splits OTLP requests directly on
// their protobuf bytes, without building pdata.
//
// A Request views the bytes of an ExportTraceServiceRequest,
// ExportMetricsServiceRequest or ExportLogsServiceRequest (TracesData,
// MetricsData and LogsData share the layout). From it one reaches, without
// copying, each ResourceData (ResourceSpans, ResourceMetrics, ResourceLogs),
// its Resource and attributes (KeyValue, Value), and each ScopeData with its
// InstrumentationScope. Items (spans, data points, log records) are counted
// and split, but not yet exposed as typed views.
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
// occurrence, as protobuf and pdata define.
//
// # Validation
//
// Every operation validates the levels it walks: field framing (varints,
// lengths, truncation), the wire types of known fields and field numbers.
// Counting walks request, resource and scope messages, and for metrics the
// Metric and its data message; it does not look inside spans, log records or
// data points. Attribute operations validate the attributes they read;
// Hash validates every attribute value recursively. Errors match
// ErrMalformed with errors.Is and are *ParseError values naming the message,
// byte offset and field that failed. Input that pdata accepts is never
// rejected, with one deliberate exception: groups (wire types 3 and 4),
// which proto3 producers never emit and which pdata only partially skips,
// are always rejected. Input that pdata rejects deeper than the walked
// levels (say, a corrupt span) may still be counted.
//
// # Routing hash
//
// Resource.Hash and Resource.HashKeys compute a 64-bit hash of a resource's
// identity that does not depend on attribute order or on the field order
// inside KeyValue and AnyValue, so pdata (descending field order) and SDKs
// (ascending) produce the same value. The algorithm is fixed (see hash.go
// and the README) and pinned by golden tests: shard assignment depends on it.
//
// # Allocation
//
// Counting, iteration, attribute lookup, hashing and AppendRequest into a
// buffer with enough capacity allocate nothing. Views alias the request
// bytes, which must not change while views are in use.
package otlpwire
