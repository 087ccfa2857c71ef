// SPDX-License-Identifier: Apache-2.0

package sidecar

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// A gateway's probe is acknowledged and leaves no trace; a resource without
// items is not a probe and is stored as before; a malformed frame without
// items is still refused.
func TestProbeIsAcknowledgedAndNotStored(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	s, _ := start(t, Config{Listen: endpoints(t)[:1], Mode: ModeFile, Dir: dir})
	hello := &sdp.Hello{ProtocolVersion: 1, Sender: "gw", ShardCount: 1}
	probe := &sdp.ResourceFrame{Sequence: 1, Signal: 1, OTLP: []byte{0x0a, 0x00}}
	if status, detail := s.HandleFrame(hello, probe); status != sdp.AckAccepted {
		t.Fatalf("probe answered %v (%s), want accepted", status, detail)
	}
	if st := s.Stats(); st.Acks["accepted"] != 0 || st.Totals["all"].Frames != 0 {
		t.Errorf("probe counted: %+v %+v", st.Totals, st.Acks)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName(0, 1))); !os.IsNotExist(err) {
		t.Errorf("probe stored: %v", err)
	}

	empty := &sdp.ResourceFrame{Sequence: 2, Signal: 1, ResourceHash: 42, OTLP: []byte{0x0a, 0x00}}
	if status, detail := s.HandleFrame(hello, empty); status != sdp.AckAccepted {
		t.Fatalf("resource without items answered %v (%s)", status, detail)
	}
	if st := s.Stats(); st.Acks["accepted"] != 1 {
		t.Errorf("resource without items not counted: %+v", st.Acks)
	}

	malformed := &sdp.ResourceFrame{Sequence: 3, Signal: 1, OTLP: []byte{0x0a, 0x05}}
	if status, _ := s.HandleFrame(hello, malformed); status != sdp.AckRejected {
		t.Errorf("malformed frame without items answered %v, want rejected", status)
	}
	otherSignal := &sdp.ResourceFrame{Sequence: 4, Signal: 5, OTLP: []byte{0x0a, 0x00}}
	if status, _ := s.HandleFrame(hello, otherSignal); status != sdp.AckRejected {
		t.Errorf("signal 5 frame without items answered %v, want rejected by file mode", status)
	}
}
