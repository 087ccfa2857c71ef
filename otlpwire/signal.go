// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"errors"
	"strconv"
)

// Signal identifies the OTLP signal a request carries. The numbers are the
// ones SDP uses in its signal field.
type Signal uint8

// The three OTLP signals.
const (
	SignalTraces  Signal = 1
	SignalMetrics Signal = 2
	SignalLogs    Signal = 3
)

// ErrUnknownSignal is returned by operations on a Request or ResourceData whose
// Signal is not one of SignalTraces, SignalMetrics or SignalLogs.
var ErrUnknownSignal = errors.New("otlpwire: unknown signal")

// String returns "traces", "metrics" or "logs".
func (s Signal) String() string {
	switch s {
	case SignalTraces:
		return "traces"
	case SignalMetrics:
		return "metrics"
	case SignalLogs:
		return "logs"
	}
	return "Signal(" + strconv.Itoa(int(s)) + ")"
}

func (s Signal) valid() bool { return s >= SignalTraces && s <= SignalLogs }

// schemas returns the request, ResourceX and ScopeX schemas of s; s must be valid.
func (s Signal) schemas() (req, res, scope *schema) {
	switch s {
	case SignalTraces:
		return &schemaTracesRequest, &schemaResourceSpans, &schemaScopeSpans
	case SignalMetrics:
		return &schemaMetricsRequest, &schemaResourceMetrics, &schemaScopeMetrics
	default:
		return &schemaLogsRequest, &schemaResourceLogs, &schemaScopeLogs
	}
}
