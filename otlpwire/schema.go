// SPDX-License-Identifier: Apache-2.0

package otlpwire

// Wire-type expectations for the known fields of each message. A field whose
// wire type does not match is an error, exactly as in pdata's unmarshalers;
// unknown fields are skipped whatever their (legal) wire type.
const (
	expNone   = 0 // unknown field: skipped
	expVarint = 1 + wireVarint
	expI64    = 1 + wireI64
	expLen    = 1 + wireLen
	expI32    = 1 + wireI32
	// Packed repeated scalars: LEN (packed) or one element.
	expPackedI64    = 10
	expPackedVarint = 11
	// A field number the pinned profiles layout does not define, in a
	// message of that layout: refused (see ErrProfilesVersion).
	expRefused = 12
)

// schema names a message and lists what its known fields must look like.
type schema struct {
	name    string
	known   [17]uint8 // indexed by field number
	has1000 bool      // field 1000 is a known LEN field (deprecated scopes)
	// strict marks the messages of the profiles layout: a field number
	// they do not define is refused rather than skipped (known holds
	// expRefused for those below 17).
	strict bool
}

// allowed maps an expectation to the set of wire types (bit 1<<type) it
// accepts.
var allowed = [...]uint8{
	expNone:         0xff,
	expVarint:       1 << wireVarint,
	expI64:          1 << wireI64,
	expLen:          1 << wireLen,
	expI32:          1 << wireI32,
	expPackedI64:    1<<wireLen | 1<<wireI64,
	expPackedVarint: 1<<wireLen | 1<<wireVarint,
	expRefused:      0,
}

func (s *schema) accepts(num int32, typ uint8) bool {
	var e uint8
	if uint32(num) < uint32(len(s.known)) {
		e = s.known[num]
	} else if num == 1000 && s.has1000 {
		e = expLen
	} else if s.strict {
		e = expRefused
	}
	return allowed[e]>>typ&1 != 0
}

// Field numbers used by the walkers.
const (
	fieldResource       = 1    // ResourceX.resource
	fieldScopes         = 2    // ResourceX.scope_x
	fieldSchemaURL      = 3    // ResourceX/ScopeX.schema_url
	fieldDeprecated     = 1000 // ResourceX.deprecated_scope_x
	fieldScope          = 1    // ScopeX.scope
	fieldItems          = 2    // ScopeX.spans/metrics/log_records
	fieldResourceAttrs  = 1    // Resource.attributes
	fieldScopeAttrs     = 3    // InstrumentationScope.attributes
	fieldRequestEntries = 1    // Export*ServiceRequest.resource_x
	fieldEntityRefs     = 3    // Resource.entity_refs
)

var (
	schemaTracesRequest  = schema{name: "ExportTraceServiceRequest", known: [17]uint8{1: expLen}}
	schemaMetricsRequest = schema{name: "ExportMetricsServiceRequest", known: [17]uint8{1: expLen}}
	schemaLogsRequest    = schema{name: "ExportLogsServiceRequest", known: [17]uint8{1: expLen}}

	schemaResourceSpans   = schema{name: "ResourceSpans", known: [17]uint8{1: expLen, 2: expLen, 3: expLen}, has1000: true}
	schemaResourceMetrics = schema{name: "ResourceMetrics", known: [17]uint8{1: expLen, 2: expLen, 3: expLen}, has1000: true}
	schemaResourceLogs    = schema{name: "ResourceLogs", known: [17]uint8{1: expLen, 2: expLen, 3: expLen}, has1000: true}

	schemaScopeSpans   = schema{name: "ScopeSpans", known: [17]uint8{1: expLen, 2: expLen, 3: expLen}}
	schemaScopeMetrics = schema{name: "ScopeMetrics", known: [17]uint8{1: expLen, 2: expLen, 3: expLen}}
	schemaScopeLogs    = schema{name: "ScopeLogs", known: [17]uint8{1: expLen, 2: expLen, 3: expLen}}

	schemaResource = schema{name: "Resource", known: [17]uint8{1: expLen, 2: expVarint, 3: expLen}}
	schemaScope    = schema{name: "InstrumentationScope", known: [17]uint8{1: expLen, 2: expLen, 3: expLen, 4: expVarint}}
	schemaKeyValue = schema{name: "KeyValue", known: [17]uint8{1: expLen, 2: expLen, 3: expVarint}}
	schemaAnyValue = schema{name: "AnyValue", known: [17]uint8{1: expLen, 2: expVarint, 3: expVarint, 4: expI64,
		5: expLen, 6: expLen, 7: expLen, 8: expVarint}}
	schemaArrayValue   = schema{name: "ArrayValue", known: [17]uint8{1: expLen}}
	schemaEntityRef    = schema{name: "EntityRef", known: [17]uint8{1: expLen, 2: expLen, 3: expLen, 4: expLen}}
	schemaKeyValueList = schema{name: "KeyValueList", known: [17]uint8{1: expLen}}

	schemaSpan = schema{name: "Span", known: [17]uint8{1: expLen, 2: expLen, 3: expLen, 4: expLen, 5: expLen,
		6: expVarint, 7: expI64, 8: expI64, 9: expLen, 10: expVarint, 11: expLen, 12: expVarint,
		13: expLen, 14: expVarint, 15: expLen, 16: expI32}}
	schemaLogRecord = schema{name: "LogRecord", known: [17]uint8{1: expI64, 2: expVarint, 3: expLen,
		5: expLen, 6: expLen, 7: expVarint, 8: expI32, 9: expLen, 10: expLen, 11: expI64, 12: expLen}}
	schemaMetric = schema{name: "Metric", known: [17]uint8{1: expLen, 2: expLen, 3: expLen,
		5: expLen, 7: expLen, 9: expLen, 10: expLen, 11: expLen, 12: expLen}}

	schemaGauge        = schema{name: "Gauge", known: [17]uint8{1: expLen}}
	schemaSum          = schema{name: "Sum", known: [17]uint8{1: expLen, 2: expVarint, 3: expVarint}}
	schemaHistogram    = schema{name: "Histogram", known: [17]uint8{1: expLen, 2: expVarint}}
	schemaExpHistogram = schema{name: "ExponentialHistogram", known: [17]uint8{1: expLen, 2: expVarint}}
	schemaSummary      = schema{name: "Summary", known: [17]uint8{1: expLen}}

	schemaNumberDataPoint = schema{name: "NumberDataPoint", known: [17]uint8{2: expI64, 3: expI64, 4: expI64,
		5: expLen, 6: expI64, 7: expLen, 8: expVarint}}
	schemaHistogramDataPoint = schema{name: "HistogramDataPoint", known: [17]uint8{2: expI64, 3: expI64,
		4: expI64, 5: expI64, 6: expPackedI64, 7: expPackedI64, 8: expLen, 9: expLen, 10: expVarint,
		11: expI64, 12: expI64}}
	schemaExpHistogramDataPoint = schema{name: "ExponentialHistogramDataPoint", known: [17]uint8{1: expLen,
		2: expI64, 3: expI64, 4: expI64, 5: expI64, 6: expVarint, 7: expI64, 8: expLen, 9: expLen,
		10: expVarint, 11: expLen, 12: expI64, 13: expI64, 14: expI64}}
	schemaSummaryDataPoint = schema{name: "SummaryDataPoint", known: [17]uint8{2: expI64, 3: expI64,
		4: expI64, 5: expI64, 6: expLen, 7: expLen, 8: expVarint}}
)
