// SPDX-License-Identifier: Apache-2.0

package sidecar

import (
	"path/filepath"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// BenchmarkHandleFrameCount measures what mode count does per frame beyond
// the transport: the sink and the statistics, from as many goroutines as
// there are connections in the end-to-end benchmark (two shards), so that
// contention on the statistics shows.
func BenchmarkHandleFrameCount(b *testing.B) {
	s, err := New(Config{Listen: []string{"unix://" + filepath.Join(b.TempDir(), "s.sock")}, Mode: ModeCount})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	hello := &sdp.Hello{ProtocolVersion: sdp.ProtocolVersion, Shard: 0, ShardCount: 2}
	f := &sdp.ResourceFrame{Sequence: 1, Signal: 1, ItemCount: 100, OTLP: make([]byte, 11<<10)}
	b.SetParallelism(1)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if status, _ := s.HandleFrame(hello, f); status != sdp.AckAccepted {
				b.Fatal(status)
			}
		}
	})
}
