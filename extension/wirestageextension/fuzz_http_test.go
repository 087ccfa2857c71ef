// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"

	"github.com/otelcol-sdp/otelcol-sdp/internal/profilestest"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// FuzzHTTPStage drives arbitrary bytes through the extension's HTTP
// handler, in process, with two stages registered for every signal: one
// that diverts the resources selected by mask (or refuses, by the mask's top
// bits), one that counts. The declared Content-Length is fuzzed too. The
// handler must not panic, must hand the receiver either the request as it
// came (malformed bytes are the receiver's to refuse) or exactly the kept
// resources, must answer every refusal with a status, and must hold no
// request buffer once it has answered.
func FuzzHTTPStage(f *testing.F) {
	valid := marshal(f, traces(2, "a", "b", "c"))
	f.Add(valid, uint64(0b101), int64(len(valid)), uint8(0))
	f.Add(valid, uint64(0), int64(-1), uint8(1))
	f.Add(valid, uint64(1)<<62, int64(16<<20), uint8(2))
	f.Add(valid, uint64(1)<<63, int64(0), uint8(0))
	f.Add(valid[:len(valid)-3], ^uint64(0), int64(1<<40), uint8(0))
	f.Add([]byte{0x0a, 0x05, 0x01}, uint64(1), int64(3), uint8(3))
	f.Add([]byte{}, uint64(1), int64(0), uint8(0))
	profiles := profilestest.Marshal(profilestest.Generate(1, profilestest.Shape{
		Resources: 3, Scopes: 1, Profiles: 1, Samples: 4, Functions: 4, Locations: 6, Stacks: 4, Depth: 3,
	}))
	f.Add(profiles, uint64(0b101), int64(len(profiles)), uint8(3))
	f.Add(profiles, uint64(0b010), int64(len(profiles)), uint8(3))

	w, err := newWireStage(settingsFor(f), &Config{Stages: []component.ID{stageID, countID}, DivertAllPipelines: true, RetryAfter: time.Second})
	if err != nil {
		f.Fatal(err)
	}
	var mask uint64
	divert := StageFunc(func(_ context.Context, req otlpwire.Request) (Result, error) {
		switch {
		case mask&(1<<63) != 0:
			return Result{}, consumererror.NewPermanent(errors.New("refused for good"))
		case mask&(1<<62) != 0:
			return Result{}, errors.New("refused for now")
		}
		var keep []int
		i := 0
		for _, err := range req.Resources() {
			if err != nil {
				return Result{}, err
			}
			if mask&(1<<(i%62)) != 0 {
				keep = append(keep, i)
			}
			i++
		}
		return Result{Divert: true, Keep: keep}, nil
	})
	count := StageFunc(func(_ context.Context, req otlpwire.Request) (Result, error) {
		_, err := req.ItemCount()
		return Result{}, err
	})
	for sig := otlpwire.SignalTraces; sig <= otlpwire.SignalProfiles; sig++ {
		if _, err := w.register(stageID, sig, divert, true); err != nil {
			f.Fatal(err)
		}
		if _, err := w.register(countID, sig, count, false); err != nil {
			f.Fatal(err)
		}
	}
	var decoded []byte
	var reached bool
	wrap, err := w.GetHTTPHandler(context.Background())
	if err != nil {
		f.Fatal(err)
	}
	h, err := wrap(context.Background(), http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		reached = true
		decoded, _ = io.ReadAll(r.Body)
		rw.WriteHeader(http.StatusOK)
	}))
	if err != nil {
		f.Fatal(err)
	}
	paths := [...]string{pathTraces, pathMetrics, pathLogs, pathProfiles, "/v1/other"}
	signalOf := [...]otlpwire.Signal{otlpwire.SignalTraces, otlpwire.SignalMetrics, otlpwire.SignalLogs, otlpwire.SignalProfiles, 0}

	f.Fuzz(func(t *testing.T, body []byte, m uint64, declared int64, route uint8) {
		mask, decoded, reached = m, nil, false
		in := append([]byte(nil), body...)
		path := paths[int(route)%len(paths)]
		r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		r.Header.Set("Content-Type", protobufContentType)
		r.ContentLength = declared
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)

		if n := w.callsOut.Load(); n != 0 {
			t.Fatalf("%d request buffers held after the answer", n)
		}
		if !bytes.Equal(body, in) {
			t.Fatal("the handler modified the request bytes")
		}
		sig := signalOf[int(route)%len(paths)]
		_, malformed := otlpwire.NewRequest(sig, body).ItemCount()
		switch {
		case sig == 0 || malformed != nil:
			if !reached || !bytes.Equal(decoded, body) {
				t.Fatalf("%s: the receiver did not get the request as it came (reached %v)", path, reached)
			}
		case m&(1<<63) != 0:
			if reached || rec.Code != http.StatusBadRequest {
				t.Fatalf("permanent refusal: status %d, reached %v", rec.Code, reached)
			}
		case m&(1<<62) != 0:
			if reached || rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
				t.Fatalf("retryable refusal: status %d, Retry-After %q, reached %v", rec.Code, rec.Header().Get("Retry-After"), reached)
			}
		default:
			var want []byte
			var kept otlpwire.ResourceData
			i := 0
			for rd, err := range otlpwire.NewRequest(sig, body).Resources() {
				if err != nil {
					t.Fatal(err)
				}
				if m&(1<<(i%62)) != 0 {
					want = otlpwire.AppendResource(want, rd)
					kept = rd
				}
				i++
			}
			want = otlpwire.AppendDictionary(want, kept)
			if rec.Code != http.StatusOK || !bytes.Equal(decoded, want) {
				t.Fatalf("status %d; the receiver got %x, want %x", rec.Code, decoded, want)
			}
		}
	})
}
