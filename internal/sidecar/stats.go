// SPDX-License-Identifier: Apache-2.0

package sidecar

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// Counts counts accepted frames, the items they declare and their OTLP
// bytes.
type Counts struct {
	Frames uint64 `json:"frames"`
	Items  uint64 `json:"items"`
	Bytes  uint64 `json:"bytes"`
}

func (c *Counts) add(f frameStat) {
	c.Frames++
	c.Items += uint64(f.items)
	c.Bytes += uint64(f.bytes)
}

// frameStat is what the statistics need of a frame.
type frameStat struct {
	shard  uint32
	signal uint8
	items  uint32
	bytes  int
}

func statOf(f *sdp.ResourceFrame) frameStat {
	return frameStat{shard: f.Shard, signal: f.Signal, items: f.ItemCount, bytes: len(f.OTLP)}
}

// Stats is the sidecar's statistics, as written to the stats file:
//
//	{
//	  "shards": {"0": {"traces": {"frames": 2, "items": 10, "bytes": 812}, "metrics": {...}, "logs": {...}}},
//	  "totals": {"traces": {...}, "metrics": {...}, "logs": {...}, "all": {...}},
//	  "acks":   {"accepted": 2, "retry": 0, "rejected": 0},
//	  "final":  true
//	}
//
// Shards and totals count only frames acknowledged as accepted (handled
// successfully); acks counts the frames answered with each status. Every
// shard that sent a frame has the traces, metrics and logs keys (profiles
// or signal-N only when such frames came).
type Stats struct {
	Shards map[string]map[string]Counts `json:"shards"`
	Totals map[string]Counts            `json:"totals"`
	Acks   map[string]uint64            `json:"acks"`
	// Connections counts the connections served, refused and closed for
	// breaking the protocol or for timeouts.
	Connections transport.ServerStats `json:"connections"`
	// Final is true in the file written when the sidecar stops.
	Final bool `json:"final"`
}

// signalName names an SDP signal number.
func signalName(s uint8) string {
	switch s {
	case 1:
		return "traces"
	case 2:
		return "metrics"
	case 3:
		return "logs"
	case 4:
		return "profiles"
	}
	return "signal-" + strconv.Itoa(int(s))
}

var baseSignals = []string{"traces", "metrics", "logs"}

// collector accumulates Stats; safe for concurrent use.
type collector struct {
	mu     sync.Mutex
	shards map[uint32]map[string]*Counts
	acks   [3]uint64
}

func newCollector() *collector {
	return &collector{shards: map[uint32]map[string]*Counts{}}
}

func (c *collector) record(f frameStat, status sdp.AckStatus) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if int(status) < len(c.acks) {
		c.acks[status]++
	}
	if status != sdp.AckAccepted {
		return
	}
	shard := c.shards[f.shard]
	if shard == nil {
		shard = map[string]*Counts{}
		for _, s := range baseSignals {
			shard[s] = &Counts{}
		}
		c.shards[f.shard] = shard
	}
	name := signalName(f.signal)
	counts := shard[name]
	if counts == nil {
		counts = &Counts{}
		shard[name] = counts
	}
	counts.add(f)
}

func (c *collector) snapshot(final bool) Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Stats{
		Shards: map[string]map[string]Counts{},
		Totals: map[string]Counts{},
		Acks:   map[string]uint64{},
		Final:  final,
	}
	for _, name := range baseSignals {
		s.Totals[name] = Counts{}
	}
	var all Counts
	for shard, signals := range c.shards {
		out := map[string]Counts{}
		for name, counts := range signals {
			out[name] = *counts
			t := s.Totals[name]
			t.Frames += counts.Frames
			t.Items += counts.Items
			t.Bytes += counts.Bytes
			s.Totals[name] = t
			all.Frames += counts.Frames
			all.Items += counts.Items
			all.Bytes += counts.Bytes
		}
		s.Shards[strconv.FormatUint(uint64(shard), 10)] = out
	}
	s.Totals["all"] = all
	for status, n := range c.acks {
		s.Acks[sdp.AckStatus(status).String()] = n
	}
	return s
}

// writeStatsFile replaces path with b (the statistics as JSON), atomically so that
// a reader never sees half a file.
func writeStatsFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing stats: %w", err)
	}
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing stats: %w", err)
	}
	return nil
}

// printStats writes s as lines of text, shards in numeric order.
func printStats(w io.Writer, s Stats) {
	shards := make([]string, 0, len(s.Shards))
	for k := range s.Shards {
		shards = append(shards, k)
	}
	slices.SortFunc(shards, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	for _, shard := range shards {
		for _, name := range slices.Sorted(maps.Keys(s.Shards[shard])) {
			c := s.Shards[shard][name]
			fmt.Fprintf(w, "shard %s %-8s frames=%d items=%d bytes=%d\n", shard, name, c.Frames, c.Items, c.Bytes)
		}
	}
	all := s.Totals["all"]
	fmt.Fprintf(w, "total          frames=%d items=%d bytes=%d acks: accepted=%d retry=%d rejected=%d\n",
		all.Frames, all.Items, all.Bytes, s.Acks["accepted"], s.Acks["retry"], s.Acks["rejected"])
	c := s.Connections
	fmt.Fprintf(w, "connections    active=%d awaiting_hello=%d accepted=%d refused=%d evicted=%d protocol_errors=%d hello_timeouts=%d idle_timeouts=%d frame_timeouts=%d read_budget_bytes=%d\n",
		c.Active, c.AwaitingHello, c.Accepted, c.Refused, c.Evicted, c.ProtocolErrors, c.HelloTimeouts, c.IdleTimeouts, c.FrameTimeouts, c.ReadBudgetBytes)
}
