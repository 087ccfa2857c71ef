// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"bytes"
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// FuzzRun feeds arbitrary request bytes to a diverting stage that keeps the
// resources selected by mask. Malformed input must pass untouched; valid
// input must come out as exactly the kept resources, byte for byte.
func FuzzRun(f *testing.F) {
	valid := marshal(f, traces(2, "a", "b", "c"))
	f.Add(valid, uint64(0b101))
	f.Add(valid, uint64(0))
	f.Add(valid, ^uint64(0))
	f.Add(valid[:len(valid)-3], uint64(1))
	f.Add([]byte{0x0a, 0x05, 0x01}, uint64(1))
	f.Add([]byte{}, uint64(1))
	w, mask := newMaskStage(f)
	f.Fuzz(func(t *testing.T, body []byte, m uint64) {
		*mask = m
		in := append([]byte(nil), body...)
		res := w.run(context.Background(), otlpwire.SignalTraces, body, &call{})
		if !bytes.Equal(body, in) {
			t.Fatal("run modified the request bytes")
		}
		if _, err := otlpwire.NewRequest(otlpwire.SignalTraces, body).ItemCount(); err != nil {
			if res.ran != nil || res.err != nil || !bytes.Equal(res.body, body) {
				t.Fatalf("malformed input was not left untouched: %+v", res)
			}
			return
		}
		if res.err != nil {
			t.Fatalf("valid input refused: %v", res.err)
		}
		var want []byte
		i := 0
		for rd, err := range otlpwire.NewRequest(otlpwire.SignalTraces, body).Resources() {
			if err != nil {
				t.Fatal(err)
			}
			if m&(1<<(i%64)) != 0 {
				want = otlpwire.AppendRequest(want, rd)
			}
			i++
		}
		if !bytes.Equal(res.body, want) {
			t.Fatalf("kept %x, want %x", res.body, want)
		}
	})
}

// newMaskStage is a wirestage extension with one diverting traces stage that
// keeps the resources whose bit is set in *mask (bit i mod 64 for resource
// i), for the fuzz targets to drive.
func newMaskStage(f *testing.F) (*wireStage, *uint64) {
	w, err := newWireStage(settingsFor(f), &Config{Stages: []component.ID{stageID}, DivertAllPipelines: true, RetryAfter: time.Second})
	if err != nil {
		f.Fatal(err)
	}
	mask := new(uint64)
	stage := StageFunc(func(_ context.Context, req otlpwire.Request) (Result, error) {
		var keep []int
		i := 0
		for _, err := range req.Resources() {
			if err != nil {
				return Result{}, err
			}
			if *mask&(1<<(i%64)) != 0 {
				keep = append(keep, i)
			}
			i++
		}
		return Result{Divert: true, Keep: keep}, nil
	})
	if _, err := w.register(stageID, otlpwire.SignalTraces, stage, true); err != nil {
		f.Fatal(err)
	}
	return w, mask
}
