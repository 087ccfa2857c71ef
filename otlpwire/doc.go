// SPDX-License-Identifier: Apache-2.0

// Package otlpwire reads, counts, hashes and splits OTLP requests directly on
// their protobuf bytes, without building pdata.
//
// A Request views the bytes of an ExportTraceServiceRequest,
// ExportMetricsServiceRequest, ExportLogsServiceRequest or
// ExportProfilesServiceRequest (TracesData, MetricsData, LogsData and
// ProfilesData share the layout). From it one reaches, without copying,
// each ResourceData (ResourceSpans, ResourceMetrics, ResourceLogs,
// ResourceProfiles),
// its Resource and attributes (KeyValue, Value), each ScopeData with its
// InstrumentationScope, and the items: ScopeData.Spans (Span with SpanEvent,
// SpanLink and SpanStatus), ScopeData.LogRecords (LogRecord) and
// ScopeData.Metrics (Metric with NumberDataPoint, HistogramDataPoint,
// ExponentialHistogramDataPoint, SummaryDataPoint and Exemplar). Item views
// are plain byte slices: each accessor scans the item for its field, so
// reading one or two fields per item is cheap and reading all of them costs
// about what decoding with pdata does, without allocating.
//
// # Profiles
//
// The profiles signal (SignalProfiles) follows the layout named by
// ProfilesProtoVersion, the one pdata v1.71.0 and pprofile v0.165.0 read;
// the profiles proto is still in development, and bytes laid out by another
// version are refused with an error matching ErrProfilesVersion rather than
// misread. Its items are samples: ItemCount equals pprofile's
// Profiles.SampleCount, and ProfileCount counts profiles. A profiles request
// carries a dictionary that its resources share; the ResourceData it yields
// carry it, AppendRequest and SplitResource write it into every request they
// build (SplitResource cuts between profiles, never inside one), and
// AppendRequestPruned writes it pruned to what the resource references,
// keeping every index, so that no sample is re-encoded. The attributes of a
// profiles resource or scope resolve keys and string values written as
// string-table references (as pdata's marshaller writes them), so lookups
// and hashes equal those of the same resource in another signal.
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
// Resource.HashWith and Resource.HashKeysWith compute a 64-bit hash of a
// resource's identity that does not depend on attribute order or on the
// field order inside KeyValue and AnyValue, so pdata (value before key) and
// SDKs (key before value) produce the same value. Shard assignment depends
// on it, so each HashVersion is stable across releases and pinned by golden
// tests; a faster or better hash comes as a new version. Resource.Hash and
// Resource.HashKeys are HashV1.
//
// Both versions share a canonical view of an attribute: its key, then its
// value as a code and a payload: 0 empty (also a string-table index, which
// pdata reads as empty), no payload; 1 string, its bytes; 2 bool, one byte
// 0 or 1; 3 int, 8 bytes little-endian two's complement; 4 double, the 8
// IEEE-754 bytes little-endian (bitwise: -0 and +0 differ, NaNs by
// payload); 5 array, the number of elements, then each element's value in
// order; 6 kvlist, the number of entries, then the 8-byte little-endian
// wrapping sum of the entries' attribute hashes (so entry order does not
// matter); 7 bytes, its bytes.
//
// HashV1 writes that view as bytes, uvarint(len(key)) key, then per value
// one code byte and: nothing (0); uvarint(len) bytes (1, 7); the byte (2);
// the 8 bytes (3, 4); uvarint(n) and the elements (5); uvarint(n) and the
// sum (6). The attribute hash is SplitMix64's finaliser applied to the
// 64-bit FNV-1a hash of those bytes.
//
// HashV2 absorbs the view piece by piece into a 64-bit state h, starting
// from 0x6a09e667f3bcc908. A piece has a header, (L << 8) | code, and a
// payload: the key is a piece with code 0, L its length; a string or bytes
// value has L its length; a bool L = 1 and its byte; an int or double L = 8
// and its 8 bytes; an empty value L = 0 and no payload; an array L = n and
// no payload, followed by its elements as pieces; a kvlist L = n and the 8
// bytes of the sum. To absorb a piece, h ^= header * 0xbb67ae8584caa73b;
// then, while more than 8 payload bytes remain, h = fold(h ^ w) with w the
// next 8 bytes little-endian; finally h = fold(h ^ last), where last packs
// the remaining 0 to 8 bytes b[0..n): 0 for none; for n >= 4, the first 4
// and the last 4 bytes as two little-endian 32-bit halves (low, high); for
// n < 4, b[0] | b[n/2] << 8 | b[n-1] << 16. fold(x) multiplies x by
// 0x3c6ef372fe94f82b into 128 bits and xors the two halves. The attribute
// hash is SplitMix64's finaliser applied to h. (The three constants are the
// fractional parts of the square roots of 2, 3 and 5.)
//
// In both versions the resource hash is the finaliser applied to
// S + n*0x9e3779b97f4a7c15, where S is the wrapping sum of the attribute
// hashes and n the number of attributes hashed: every attribute for
// HashWith (a duplicate counts twice), the first occurrence of each distinct
// listed key for HashKeysWith. Only decoded values enter, so field order
// inside KeyValue and AnyValue, non-minimal varints, unknown fields and
// attribute order have no effect. A resource without attributes hashes to
// 0.
//
// # Allocation
//
// Counting, iteration (items included), reading item fields, attribute
// lookup, hashing and AppendRequest into a buffer with enough capacity
// allocate nothing, as long as iterators are ranged over where they are
// made: an iterator stored in a variable of func type or passed to another
// function can make its loop body escape to the heap. Views alias the request
// bytes, which must not change while views are in use.
//
// # Stability
//
// The module is at v0.x. The part of the API that otelcol-sdp's own
// components use is stable: it changes only with a deprecation first,
// recorded in CHANGELOG.md. Everything else is experimental and may still
// change in a minor release; the CHANGELOG says when it does.
//
// Stable: [Signal] and its constants; [NewRequest] and [Request]'s Signal,
// Bytes, ItemCount and Resources; [NewResourceData] and [ResourceData]'s
// Signal, Bytes, ItemCount and Resource; [Resource]'s Attributes, Attribute,
// Hash, HashKeys, HashWith and HashKeysWith; [KeyValue]'s Key, KeyBytes and
// Value; [Value]'s Str, Text and AppendText; [HashVersion], [HashV1] and
// [HashV2] together with the hash values they define (shard assignment
// depends on them); [SplitResource], [Chunk] and [AppendRequest]; and the
// errors [ErrMalformed], [ErrUnsupported], [ErrItemTooLarge] and
// [ErrHashVersion].
//
// Experimental: the profiles signal as a whole ([SignalProfiles] and
// everything specific to it: [ProfilesProtoVersion], [ErrProfilesVersion],
// [ErrProfileTooLarge], [NewProfilesResourceData], the ProfileCount
// methods, [AppendResource], [AppendDictionary], [AppendRequestPruned] and
// [PruneScratch]), since its proto is still in development; and the rest,
// notably [ScopeData] and [InstrumentationScope], [Signal.Valid],
// every item view (Span, LogRecord, Metric, the data points, Exemplar and
// their parts), [Value]'s other accessors, the [ParseError] fields,
// [NewValue], [NewResource], [NewScopeData], [RequestSize],
// [WholeItemCount] and [Request.ItemAndResourceCount].
package otlpwire
