// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// The otlp receiver's default HTTP paths. A receiver configured with other
// paths is served on the pdata path.
const (
	pathTraces  = "/v1/traces"
	pathMetrics = "/v1/metrics"
	pathLogs    = "/v1/logs"
	// pathProfiles is served only with the feature gate
	// service.profilesSupport.
	pathProfiles = "/v1development/profiles"
)

const protobufContentType = "application/x-protobuf"

// The request buffer grows with the bytes that arrived, never with the
// Content-Length the client declares: each growth adds what the buffer
// already holds (at least minReadStep) up to maxReadStep, and beyond that a
// quarter of what it holds, so a request holds at most the bytes it sent
// plus the larger of maxReadStep and a quarter of them, and a large body is
// copied a few times over rather than once per maxReadStep (a 20 MiB body
// in 1 MiB steps would be copied about 200 MiB). confighttp's
// max_request_body_size bounds the bytes themselves.
const (
	minReadStep = 4 << 10
	maxReadStep = 1 << 20
)

// GetHTTPHandler wraps the otlp receiver's HTTP handler. confighttp applies
// middlewares inside its decompression, so the body read here is the
// decompressed request.
func (w *wireStage) GetHTTPHandler(context.Context) (func(context.Context, http.Handler) (http.Handler, error), error) {
	return func(_ context.Context, next http.Handler) (http.Handler, error) {
		return &httpStage{w: w, next: next}, nil
	}, nil
}

type httpStage struct {
	w    *wireStage
	next http.Handler
}

func (h *httpStage) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	sig, ok := httpSignal(r)
	if !ok || !h.w.active(sig) {
		h.next.ServeHTTP(rw, r)
		return
	}
	c := h.w.getCall()
	defer h.w.putCall(c)
	body, err := readBody(r.Body, c.bufs[0][:0])
	c.bufs[0] = body
	_ = r.Body.Close()
	if err != nil {
		// The decompressor or the body size limit failed: the same answer
		// the receiver gives when it cannot read a body.
		writeStatus(rw, http.StatusBadRequest, codes.InvalidArgument, err.Error(), 0)
		return
	}
	// The stages write into c.bufs[1] first; the body stays in c.bufs[0]
	// until the first diverting stage swaps them.
	c.bufs[0], c.bufs[1] = c.bufs[1], c.bufs[0]
	res := h.w.run(r.Context(), sig, body, c)
	if res.err != nil {
		if consumererror.IsPermanent(res.err) {
			writeStatus(rw, http.StatusBadRequest, codes.InvalidArgument, res.err.Error(), 0)
		} else {
			writeStatus(rw, http.StatusServiceUnavailable, codes.Unavailable, res.err.Error(), h.w.cfg.RetryAfter.Seconds())
		}
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(res.body))
	r.ContentLength = int64(len(res.body))
	h.next.ServeHTTP(rw, r.WithContext(withRan(r.Context(), res.ran)))
}

// httpSignal reports the signal of an OTLP protobuf export request.
// JSON requests are left to the pdata path.
func httpSignal(r *http.Request) (otlpwire.Signal, bool) {
	if r.Method != http.MethodPost || !isProtobuf(r.Header.Get("Content-Type")) {
		return 0, false
	}
	switch r.URL.Path {
	case pathTraces:
		return otlpwire.SignalTraces, true
	case pathMetrics:
		return otlpwire.SignalMetrics, true
	case pathLogs:
		return otlpwire.SignalLogs, true
	case pathProfiles:
		// A request declaring another development version of the layout
		// is the receiver's to refuse, before any stage reads it.
		if pprofileotlp.ValidateDevelopmentVersion(r.Header.Values(pprofileotlp.DevelopmentVersionHeader)) != nil {
			return 0, false
		}
		return otlpwire.SignalProfiles, true
	}
	return 0, false
}

// isProtobuf matches the media type the otlp receiver reads as protobuf,
// ignoring parameters and case as mime.ParseMediaType does.
func isProtobuf(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), protobufContentType)
}

// readBody reads all of body into dst, growing it by readStep.
func readBody(body io.Reader, dst []byte) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			grown := make([]byte, len(dst), len(dst)+readStep(len(dst)))
			copy(grown, dst)
			dst = grown
		}
		n, err := body.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// readStep is how much a buffer holding n bytes grows when it is full:
// doubling up to maxReadStep, then by a quarter.
func readStep(n int) int {
	return min(max(n, minReadStep), max(maxReadStep, n/4))
}

// writeStatus answers with a google.rpc.Status in protobuf, as the otlp
// receiver does for errors. retryAfter > 0 adds Retry-After (whole seconds,
// at least 1).
func writeStatus(rw http.ResponseWriter, httpStatus int, code codes.Code, msg string, retryAfter float64) {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(code))
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendString(b, msg)
	rw.Header().Set("Content-Type", protobufContentType)
	if retryAfter > 0 {
		rw.Header().Set("Retry-After", strconv.Itoa(max(1, int(retryAfter+0.5))))
	}
	rw.WriteHeader(httpStatus)
	_, _ = rw.Write(b)
}
