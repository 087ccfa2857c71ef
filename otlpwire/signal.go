// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"errors"
	"strconv"
)

// Signal identifies the OTLP signal a request carries. The numbers are the
// ones SDP uses in its signal field.
type Signal uint8

// The four OTLP signals. SignalProfiles is the profiles signal of the proto
// layout pinned by ProfilesProtoVersion.
const (
	SignalTraces   Signal = 1
	SignalMetrics  Signal = 2
	SignalLogs     Signal = 3
	SignalProfiles Signal = 4
)

// ErrUnknownSignal is returned by operations on a Request or ResourceData whose
// Signal is not one of SignalTraces, SignalMetrics, SignalLogs or
// SignalProfiles.
var ErrUnknownSignal = errors.New("otlpwire: unknown signal")

// String returns "traces", "metrics", "logs" or "profiles".
func (s Signal) String() string {
	switch s {
	case SignalTraces:
		return "traces"
	case SignalMetrics:
		return "metrics"
	case SignalLogs:
		return "logs"
	case SignalProfiles:
		return "profiles"
	}
	return "Signal(" + strconv.Itoa(int(s)) + ")"
}

// Valid reports whether s is one of the four signals.
func (s Signal) Valid() bool { return s >= SignalTraces && s <= SignalProfiles }

// schemas returns the request, ResourceX and ScopeX schemas of s; s must be valid.
func (s Signal) schemas() (req, res, scope *schema) {
	switch s {
	case SignalTraces:
		return &schemaTracesRequest, &schemaResourceSpans, &schemaScopeSpans
	case SignalMetrics:
		return &schemaMetricsRequest, &schemaResourceMetrics, &schemaScopeMetrics
	case SignalProfiles:
		return &schemaProfilesRequest, &schemaResourceProfiles, &schemaScopeProfiles
	default:
		return &schemaLogsRequest, &schemaResourceLogs, &schemaScopeLogs
	}
}
