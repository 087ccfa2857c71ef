// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// metricLoad sends gauge points to one gateway until stopped: requests of
// 5 resources (of 20 services), each with 3 metrics of 8 series (host
// attribute); every point's int value is unique, so that it can be found.
type metricLoad struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	acked  map[int64]bool
	sent   int
	failed int
}

func startMetricLoad(t *testing.T, endpoint string, base int64) *metricLoad {
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &metricLoad{cancel: cancel, acked: map[int64]bool{}}
	client := pmetricotlp.NewGRPCClient(conn)
	for sender := range 2 {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			next := base + int64(sender)<<32
			for round := 0; ctx.Err() == nil; round++ {
				md := pmetric.NewMetrics()
				var ids []int64
				now := pcommon.NewTimestampFromTime(time.Now())
				for r := range 5 {
					rm := md.ResourceMetrics().AppendEmpty()
					rm.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", (round*5+r+sender*7)%20))
					sm := rm.ScopeMetrics().AppendEmpty()
					sm.Scope().SetName("streamtest")
					for m := range 3 {
						g := sm.Metrics().AppendEmpty()
						g.SetName(fmt.Sprintf("metric.%d", m))
						points := g.SetEmptyGauge().DataPoints()
						for h := range 8 {
							dp := points.AppendEmpty()
							dp.Attributes().PutStr("host", fmt.Sprintf("host-%d", h))
							dp.SetTimestamp(now)
							next++
							dp.SetIntValue(next)
							ids = append(ids, next)
						}
					}
				}
				callCtx, cancelCall := context.WithTimeout(ctx, 10*time.Second)
				_, err := client.Export(callCtx, pmetricotlp.NewExportRequestFromMetrics(md))
				cancelCall()
				l.mu.Lock()
				l.sent += len(ids)
				if err == nil {
					for _, id := range ids {
						l.acked[id] = true
					}
				} else if ctx.Err() == nil {
					l.failed++
				}
				l.mu.Unlock()
				select {
				case <-ctx.Done():
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
	}
	t.Cleanup(func() { l.stop(); conn.Close() })
	return l
}

func (l *metricLoad) stop() map[int64]bool {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acked
}

// pointAt is one data point a sidecar wrote: its series and when it was
// built.
type pointAt struct {
	Series string
	Built  time.Time
}

// readPoints reads the metrics files a sidecar wrote in mode file, by the
// points' int values.
func readPoints(t *testing.T, dir string) map[int64]pointAt {
	t.Helper()
	out := map[int64]pointAt{}
	files, _ := filepath.Glob(filepath.Join(dir, "shard-*-metrics.otlp"))
	var u pmetric.ProtoUnmarshaler
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+4 <= len(b); {
			n := int(binary.LittleEndian.Uint32(b[off:]))
			md, err := u.UnmarshalMetrics(b[off+4 : off+4+n])
			off += 4 + n
			if err != nil {
				t.Fatal(err)
			}
			for _, rm := range md.ResourceMetrics().All() {
				svc, _ := rm.Resource().Attributes().Get("service.name")
				for _, sm := range rm.ScopeMetrics().All() {
					for _, m := range sm.Metrics().All() {
						for _, dp := range m.Gauge().DataPoints().All() {
							host, _ := dp.Attributes().Get("host")
							out[dp.IntValue()] = pointAt{Series: svc.Str() + "/" + m.Name() + "/" + host.Str(), Built: dp.Timestamp().AsTime()}
						}
					}
				}
			}
		}
	}
	return out
}

// TestFleetRoutesByStreamID sends metrics through two gateways with
// routing_key streamID in front of a fleet that goes 4 -> 5 -> 3: while
// the gateways agree every series is on one consumer, and no acknowledged
// point is lost.
func TestFleetRoutesByStreamID(t *testing.T) {
	r := newFleetRig(t, 5)
	r.routingKey = "streamID"
	for i := range 5 {
		r.startSidecar(i)
	}
	r.members(0, 1, 2, 3)
	r.startGateway(0)
	r.startGateway(1)
	appliedAt := r.awaitApplied(1, 4)
	loads := []*metricLoad{startMetricLoad(t, r.gateways[0].grpc, 1<<40), startMetricLoad(t, r.gateways[1].grpc, 2<<40)}

	const stable = 4 * time.Second
	const settle, guard = 300 * time.Millisecond, 500 * time.Millisecond
	var windows []window
	hold := func(members []int) {
		time.Sleep(stable)
		windows = append(windows, window{from: appliedAt.Add(settle), to: time.Now().Add(-guard), members: members})
	}
	hold([]int{0, 1, 2, 3})
	r.members(0, 1, 2, 3, 4)
	appliedAt = r.awaitApplied(2, 5)
	hold([]int{0, 1, 2, 3, 4})
	r.members(0, 2, 3)
	appliedAt = r.awaitApplied(3, 3)
	hold([]int{0, 2, 3})

	var acked []map[int64]bool
	for _, l := range loads {
		acked = append(acked, l.stop())
	}
	for _, g := range r.gateways {
		g.proc.Stop(t, collectorStopLimit)
	}
	for _, p := range r.sidecars {
		p.Stop(t, sidecarStopLimit)
	}
	at := make([]map[int64]pointAt, len(r.sidecars))
	for i := range r.sidecars {
		at[i] = readPoints(t, r.outDirs[i])
	}
	total, lost := unreceived(acked, at)
	t.Logf("%d points acknowledged, %d lost", total, lost)
	if total == 0 || lost > 0 {
		t.Fatalf("%d of %d acknowledged points reached no consumer", lost, total)
	}
	for w, win := range windows {
		series := map[string]map[int]bool{}
		for c, points := range at {
			for _, p := range points {
				if p.Built.Before(win.from) || p.Built.After(win.to) {
					continue
				}
				if series[p.Series] == nil {
					series[p.Series] = map[int]bool{}
				}
				series[p.Series][c] = true
			}
		}
		split := 0
		for s, consumers := range series {
			if len(consumers) != 1 {
				split++
				if split <= 3 {
					t.Errorf("window %d: series %s on consumers %v", w, s, consumers)
				}
			}
		}
		t.Logf("window %d (members %v): %d series, %d split", w, win.members, len(series), split)
		if len(series) < 400 {
			t.Errorf("window %d: only %d series: the check is too weak", w, len(series))
		}
	}
}
