// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"errors"
	"fmt"
	"reflect"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// ErrGRPCUnsupported is returned by GetGRPCServerOptions when the Collector
// the extension is built with does not offer what the gRPC hook relies on;
// the otlp receiver then fails to start instead of silently decoding every
// request on the pdata path.
var ErrGRPCUnsupported = errors.New("wirestage: the gRPC pre-decode hook does not support this Collector build")

// requestTypes are the Go types gRPC decodes OTLP export requests into:
// pdata's internal messages, which no API names. They are reachable only as
// the type of the unexported orig field of pdata's exported ExportRequest
// wrappers, a detail that any pdata release may change.
type requestTypes [signals]reflect.Type

// findRequestTypes reads the request types from pdata. It fails when a
// wrapper no longer has an orig field holding a pointer to a struct.
func findRequestTypes() (requestTypes, error) {
	return requestTypesOf([signals]reflect.Type{
		otlpwire.SignalTraces - 1:   reflect.TypeFor[ptraceotlp.ExportRequest](),
		otlpwire.SignalMetrics - 1:  reflect.TypeFor[pmetricotlp.ExportRequest](),
		otlpwire.SignalLogs - 1:     reflect.TypeFor[plogotlp.ExportRequest](),
		otlpwire.SignalProfiles - 1: reflect.TypeFor[pprofileotlp.ExportRequest](),
	})
}

// requestTypesOf reads the request types from the wrappers of each signal.
func requestTypesOf(wrappers [signals]reflect.Type) (requestTypes, error) {
	var rt requestTypes
	for i, w := range wrappers {
		f, ok := w.FieldByName("orig")
		if !ok || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct {
			return rt, fmt.Errorf("%w: %s has no orig field pointing to the %s request message gRPC decodes into",
				ErrGRPCUnsupported, w, otlpwire.Signal(i+1))
		}
		rt[i] = f.Type
	}
	return rt, nil
}

// signal reports the signal of a message gRPC is about to decode into v.
func (rt *requestTypes) signal(v any) (otlpwire.Signal, bool) {
	t := reflect.TypeOf(v)
	if t == nil {
		return 0, false
	}
	for i, r := range rt {
		if t == r {
			return otlpwire.Signal(i + 1), true
		}
	}
	return 0, false
}
