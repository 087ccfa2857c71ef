// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/procstat"
	"github.com/otelcol-sdp/otelcol-sdp/internal/sidecar"
)

// deliveryCounter reads how many items of a signal reached each destination:
// the sink, the sidecars and the floor server.
type deliveryCounter struct {
	sink       *Sink
	statsFiles []string
	// floorSidecarStats are the stats files of sidecars that are floor
	// servers (SidecarFloor); they count as the sidecars.
	floorSidecarStats []string
	floorStats        string
	signal            string
	// sidecars are the processes that write statsFiles. They report only
	// when asked (SIGUSR1) and at exit, so that the counts the harness
	// polls for cost the sidecars nothing while the load runs: a short
	// -stats-interval would charge every member of a fleet a rewrite per
	// interval, which the sidecar's default (10s) does not.
	sidecars []*procstat.Process
}

// ask makes every sidecar write its stats file now.
func (d deliveryCounter) ask() error {
	for _, p := range d.sidecars {
		if err := p.Signal(syscall.SIGUSR1); err != nil {
			return fmt.Errorf("asking %s for its statistics: %w", p.Name(), err)
		}
	}
	return nil
}

// arrived is how many items reached each destination, indexed like
// destinations.
type arrived [3]int64

func (a arrived) of(dest string) int64 { return a[slices.Index(destinations, dest)] }

func (d deliveryCounter) counts() (arrived, error) {
	var sidecars int64
	for _, path := range d.statsFiles {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return arrived{}, err
		}
		var stats sidecar.Stats
		if err := json.Unmarshal(b, &stats); err != nil {
			return arrived{}, fmt.Errorf("%s: %w", path, err)
		}
		sidecars += int64(stats.Totals[d.signal].Items)
	}
	for _, path := range d.floorSidecarStats {
		stats, err := ReadFloorStats(path)
		if err != nil {
			return arrived{}, err
		}
		sidecars += stats.Items[d.signal]
	}
	floor, err := ReadFloorStats(d.floorStats)
	if err != nil {
		return arrived{}, err
	}
	return arrived{d.sink.Items(d.signal), sidecars, floor.Items[d.signal]}, nil
}

// wait polls until every expected destination has want items and returns
// when that happened. It fails at once when a destination gets more than
// want (or anything it should not get), and after settle without progress.
func (d deliveryCounter) wait(ctx context.Context, s Scenario, want int64, settle time.Duration) (time.Time, error) {
	var last arrived
	progress := time.Now()
	for {
		if err := d.ask(); err != nil {
			return time.Time{}, err
		}
		got, err := d.counts()
		if err != nil {
			return time.Time{}, err
		}
		now := time.Now()
		if err := compare(s, want, got, false); err != nil {
			return now, err
		}
		if complete(s, want, got) {
			return now, nil
		}
		if got != last {
			last, progress = got, now
		}
		if now.Sub(progress) > settle {
			return now, fmt.Errorf("items stopped arriving short of %d sent: sink %d, sidecars %d, floor %d",
				want, got.of(DestSink), got.of(DestSidecars), got.of(DestFloor))
		}
		select {
		case <-ctx.Done():
			return now, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// complete reports whether every destination s expects has want items.
func complete(s Scenario, want int64, got arrived) bool {
	for _, dest := range s.Expect {
		if got.of(dest) != want {
			return false
		}
	}
	return true
}

// check compares the final counts, after every process stopped, with want.
func (d deliveryCounter) check(s Scenario, want int64) error {
	got, err := d.counts()
	if err != nil {
		return err
	}
	if n := d.sink.Errors(); n > 0 {
		return fmt.Errorf("the sink could not read %d requests", n)
	}
	for _, path := range d.floorSidecarStats {
		if stats, err := ReadFloorStats(path); err != nil {
			return err
		} else if stats.Errors > 0 {
			return fmt.Errorf("the floor sidecar %s could not read %d requests", path, stats.Errors)
		}
	}
	if floor, err := ReadFloorStats(d.floorStats); err != nil {
		return err
	} else if floor.Errors > 0 {
		return fmt.Errorf("the floor server could not read %d requests", floor.Errors)
	}
	return compare(s, want, got, true)
}

// compare checks the counts of the destinations against want; before the
// end (final false) a count short of want is not an error yet.
func compare(s Scenario, want int64, got arrived, final bool) error {
	for i, dest := range destinations {
		expect := int64(0)
		if s.Expects(dest) {
			expect = want
		}
		if got[i] > expect || (final && got[i] != expect) {
			return fmt.Errorf("%s: %s received %d items, want exactly %d (sent %d)", s.Name, dest, got[i], expect, want)
		}
	}
	return nil
}
