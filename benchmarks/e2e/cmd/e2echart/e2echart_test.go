// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	e2ebench "github.com/otelcol-sdp/otelcol-sdp/benchmarks/e2e"
	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/chart"
)

// caseOf is a case with two rounds of total CPU lo and hi (median their
// mean) and, when floor > 0, its ratio to a floor of that median CPU.
func caseOf(scenario, signal, protocol string, lo, hi, floor float64) e2ebench.CaseResults {
	c := e2ebench.CaseResults{
		Scenario: scenario, Signal: signal, Protocol: protocol,
		Median:      e2ebench.Figures{CPUTotal: (lo + hi) / 2},
		CPUTotalMin: lo, CPUTotalMax: hi,
		Rounds: []e2ebench.Figures{{Round: 1, CPUTotal: lo}, {Round: 2, CPUTotal: hi}},
	}
	if floor > 0 {
		c.VsFloor = &e2ebench.Ratio{Median: (lo + hi) / 2 / floor, Min: lo / floor, Max: hi / floor}
	}
	return c
}

// results is a run at a load: floor, plain and divert over traces/gRPC and
// logs/HTTP, divert costing cost and plain 3 times the floor's 1.
func results(clients, resources, perResource int, payload string, cost float64) e2ebench.Results {
	r := e2ebench.Results{
		Version: e2ebench.ResultsVersion, Started: time.Date(2026, 11, 26, 7, clients, 0, 0, time.UTC),
		LoadBefore: "1.00 1.00 1.00", LoadAfter: "2.00 1.00 1.00",
		Load: e2ebench.LoadShape{Items: 2000, Warmup: 5, Clients: clients, Resources: resources,
			ItemsPerResource: perResource, Payload: payload, Compression: "none", Rounds: 2},
		Baseline: "plain", Floor: "floor",
	}
	for _, sp := range [][2]string{{"traces", "grpc"}, {"logs", "http"}} {
		r.Cases = append(r.Cases,
			caseOf("plain", sp[0], sp[1], 2.5, 3.5, 1),
			caseOf("floor", sp[0], sp[1], 0.9, 1.1, 1),
			caseOf("predecode-divert", sp[0], sp[1], cost*0.8, cost*1.2, 1))
	}
	return r
}

func writeRun(t *testing.T, dir, name string, r e2ebench.Results) string {
	t.Helper()
	path := filepath.Join(dir, name)
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFindSweeps(t *testing.T) {
	c4 := benchRun{"c4", results(4, 10, 10, "sdk", 2)}
	c16 := benchRun{"c16", results(16, 10, 10, "sdk", 3)}
	r1000 := benchRun{"r1000", results(4, 1000, 1, "sdk", 4)}
	sweeps, err := findSweeps([]benchRun{c16, r1000, c4}, sweepKeys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sweeps {
		var files []string
		for _, r := range s.runs {
			files = append(files, r.file)
		}
		got = append(got, s.key+":"+strings.Join(files, ","))
	}
	if want := []string{"clients:c4,c16", "resources:c4,r1000"}; !slices.Equal(got, want) {
		t.Fatalf("sweeps %v, want %v", got, want)
	}

	// Only clients asked for; a lone run at another payload is no sweep.
	small := benchRun{"small", results(4, 10, 10, "small", 2)}
	if sweeps, err := findSweeps([]benchRun{c4, c16, small}, []string{keyClients}); err != nil || len(sweeps) != 1 || len(sweeps[0].runs) != 2 {
		t.Fatalf("clients sweep beside a lone small-payload run: %+v, %v", sweeps, err)
	}

	for name, tc := range map[string]struct {
		runs []benchRun
		keys []string
		want string
	}{
		"two runs at one position": {[]benchRun{c4, c16, {"again", results(16, 10, 10, "sdk", 1)}}, []string{keyClients}, "c16 and again are both at clients 16"},
		"two clients sweeps": {[]benchRun{c4, c16, small, {"small16", results(16, 10, 10, "small", 1)}}, []string{keyClients},
			"2 clients sweeps"},
		"unknown key": {[]benchRun{c4, c16}, []string{"payload"}, `unknown sweep key "payload"`},
	} {
		_, err := findSweeps(tc.runs, tc.keys)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one containing %q", name, err, tc.want)
		}
	}
}

// Each chart has one series per scenario, with a point per run at the run's
// swept value carrying that run's median and range.
func TestBuildCharts(t *testing.T) {
	c4 := results(4, 10, 10, "sdk", 2)
	c16 := results(16, 10, 10, "sdk", 3)
	// Divert failed on logs/HTTP in the 16-client run: its line has one point.
	c16.Cases = slices.DeleteFunc(c16.Cases, func(c e2ebench.CaseResults) bool {
		return c.Scenario == "predecode-divert" && c.Signal == "logs"
	})
	charts := buildCharts(sweep{key: keyClients, runs: []benchRun{{"a", c4}, {"b", c16}}})
	var files []string
	byFile := map[string]chart.Chart{}
	for _, c := range charts {
		files = append(files, c.file)
		byFile[c.file] = c.chart
	}
	want := []string{"clients_traces-grpc_cpu.png", "clients_traces-grpc_vs-floor.png", "clients_logs-http_cpu.png", "clients_logs-http_vs-floor.png"}
	if !slices.Equal(files, want) {
		t.Fatalf("files %v, want %v", files, want)
	}
	cpu := byFile["clients_traces-grpc_cpu.png"]
	if len(cpu.Series) != 3 || cpu.Series[2].Label != "predecode-divert" {
		t.Fatalf("series %+v", cpu.Series)
	}
	lo4, hi4, lo16, hi16 := 2.0, 2.0, 3.0, 3.0 // as results computes them
	lo4, hi4, lo16, hi16 = lo4*0.8, hi4*1.2, lo16*0.8, hi16*1.2
	if got, want := cpu.Series[2].Points, []chart.Point{{X: 4, Y: 2, Lo: lo4, Hi: hi4}, {X: 16, Y: 3, Lo: lo16, Hi: hi16}}; !slices.Equal(got, want) {
		t.Fatalf("divert points %v, want %v", got, want)
	}
	if got := byFile["clients_traces-grpc_vs-floor.png"].Series[0].Points[1]; got != (chart.Point{X: 16, Y: 3, Lo: 2.5, Hi: 3.5}) {
		t.Fatalf("plain vs floor at 16 clients: %+v", got)
	}
	if pts := byFile["clients_logs-http_cpu.png"].Series[2].Points; len(pts) != 1 || pts[0].X != 4 {
		t.Fatalf("divert logs/http points %v, want only the 4-client one", pts)
	}
	if got := cpu.XTick(16); got != "16" {
		t.Fatalf("x tick %q", got)
	}
	res := buildCharts(sweep{key: keyResources, runs: []benchRun{{"a", c4}, {"c", results(4, 1000, 1, "sdk", 1)}}})
	if got := res[0].chart.XTick(1000); got != "1000x1" || !strings.Contains(res[0].chart.XLabel, "4 clients") {
		t.Fatalf("resources sweep: tick %q, x label %q", got, res[0].chart.XLabel)
	}
}

// The command reads the files, writes a decodable PNG of the asked size per
// chart with every scenario's colour on it, and the tables.
func TestRunWritesChartsAndTables(t *testing.T) {
	dir := t.TempDir()
	files := []string{
		writeRun(t, dir, "c4.json", results(4, 10, 10, "sdk", 2)),
		writeRun(t, dir, "c16.json", results(16, 10, 10, "sdk", 3)),
		writeRun(t, dir, "r1000.json", results(4, 1000, 1, "sdk", 4)),
	}
	charts, md := filepath.Join(dir, "charts"), filepath.Join(dir, "sweep.md")
	if err := run(append([]string{"-charts", charts, "-md", md, "-width", "640", "-height", "360"}, files...), nil, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(charts)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 8 {
		t.Fatalf("%d charts, want 8 (2 sweeps x 2 panels x 2 metrics): %v", len(entries), entries)
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(charts, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 360 {
			t.Fatalf("%s is %v, want 640x360", e.Name(), b)
		}
		for i := range 3 {
			if n := chart.CountPixels(img, chart.Palette[i]); n < 30 {
				t.Errorf("%s: series %d drawn on %d pixels", e.Name(), i, n)
			}
		}
	}
	tables, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"### clients sweep: 10 x 10 items per request, sdk payload, compression none",
		"### resources sweep: 4 clients, sdk payload, compression none",
		"| 16 | c16.json | 2026-11-26 07:16 | 2 | 2000 | 1.00 1.00 1.00; 2.00 1.00 1.00 |",
		"| predecode-divert | 2.00 (1.60–2.40) | 2.00x (1.60–2.40) | 3.00 (2.40–3.60) | 3.00x (2.40–3.60) | 1.50 |",
		"| predecode-divert | 2.00 (1.60–2.40) | 2.00x (1.60–2.40) | 4.00 (3.20–4.80) | 4.00x (3.20–4.80) | 2.00 |",
		"#### logs http, resources sweep",
	} {
		if !strings.Contains(string(tables), want) {
			t.Errorf("tables lack %q:\n%s", want, tables)
		}
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	c4 := writeRun(t, dir, "c4.json", results(4, 10, 10, "sdk", 2))
	bad := filepath.Join(dir, "report.md")
	if err := os.WriteFile(bad, []byte("| scenario | signal |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := writeRun(t, dir, "small.json", results(16, 10, 10, "small", 2))
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no output":     {[]string{c4, c4}, "nothing to do"},
		"no file":       {[]string{"-md", "-"}, "give benche2e -json files"},
		"one file":      {[]string{"-md", "-", c4}, "no sweep"},
		"not JSON":      {[]string{"-md", "-", c4, bad}, "report.md"},
		"no sweep":      {[]string{"-md", "-", c4, other}, "no sweep"},
		"tiny":          {[]string{"-md", "-", "-width", "100", c4, other}, "400x200"},
		"missing file":  {[]string{"-md", "-", c4, filepath.Join(dir, "nope.json")}, "nope.json"},
		"unknown sweep": {[]string{"-md", "-", "-x", "items", c4, other}, "unknown sweep key"},
	} {
		err := run(tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one containing %q", name, err, tc.want)
		}
	}
}

func TestCells(t *testing.T) {
	c := caseOf("x", "traces", "grpc", 1, 3, 2)
	c.Rounds = c.Rounds[:1]
	if got := cpuCell(&c, 3); got != "2.00 (1.00–3.00), 1 of 3 rounds" {
		t.Errorf("cpuCell = %q", got)
	}
	if got := floorCell(&c); got != "1.00x (0.50–1.50)" {
		t.Errorf("floorCell = %q", got)
	}
	noFloor := caseOf("x", "traces", "grpc", 1, 3, 0)
	for _, got := range []string{cpuCell(nil, 1), floorCell(&noFloor), growth(&c, &noFloor), growth(nil, &c)} {
		if got != "–" {
			t.Errorf("missing figure shown as %q", got)
		}
	}
	if got := growth(&c, &c); got != "1.00" {
		t.Errorf("growth = %q", got)
	}
}

// fleetRun is a run of fleet-nowait and fleet-wait at 2, 4 and 16 members
// beside plain and the floor, over traces/gRPC: fleet-nowait costs the
// same at every size, fleet-wait twice as much per round at 16 as at 2.
func fleetRun(t *testing.T, dir string) string { return fleetRunAt(t, dir, 4) }

func fleetRunAt(t *testing.T, dir string, clients int) string {
	r := results(clients, 10, 10, "small", 2)
	r.Cases = slices.DeleteFunc(r.Cases, func(c e2ebench.CaseResults) bool { return c.Scenario == "predecode-divert" })
	for _, n := range []int{2, 4, 16} {
		r.Cases = append(r.Cases, caseOf(fmt.Sprintf("fleet-nowait@%d", n), "traces", "grpc", 1, 1.5, 1))
		c := caseOf(fmt.Sprintf("fleet-wait@%d", n), "traces", "grpc", 1, 2, 1)
		f := map[int]float64{2: 1, 4: 1.5, 16: 2}[n]
		for i := range c.Rounds {
			c.Rounds[i].CPUTotal *= f
		}
		c.Median.CPUTotal *= f
		c.CPUTotalMin *= f
		c.CPUTotalMax *= f
		c.Median.LatencyP99Ms = 3
		r.Cases = append(r.Cases, c)
	}
	name := "fleet.json"
	if clients != 4 {
		name = fmt.Sprintf("fleet-c%d.json", clients)
	}
	return writeRun(t, dir, name, r)
}

// Two fleet runs at 4 and 32 clients are also a clients sweep; -x members
// charts only their members, one set per run.
func TestFleetRunsChartedByMembersOnly(t *testing.T) {
	dir := t.TempDir()
	a, b := fleetRunAt(t, dir, 4), fleetRunAt(t, dir, 32)
	charts := filepath.Join(dir, "charts")
	if err := run([]string{"-x", "members", "-charts", charts, a, b}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	files := chartFiles(t, charts)
	want := []string{"members-c32_traces-grpc_cpu.png", "members-c32_traces-grpc_vs-floor.png", "members-c4_traces-grpc_cpu.png", "members-c4_traces-grpc_vs-floor.png"}
	if !slices.Equal(files, want) {
		t.Errorf("charts %v, want %v", files, want)
	}
}

func TestFleetSweepTableAndCharts(t *testing.T) {
	dir := t.TempDir()
	run1 := fleetRun(t, dir)
	charts := filepath.Join(dir, "charts")
	var md bytes.Buffer
	if err := run([]string{"-charts", charts, "-md", "-", run1}, &md, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{
		"### members sweep: 4 clients, 10 x 10 items per request, small payload (fleet.json)",
		"| scenario | 2: CPU | × 2 | p99 | 4: CPU | × 2 | p99 | 16: CPU | × 2 | p99 |",
		"| fleet-nowait | 1.25 (1.00–1.50) | 1.00x (1.00–1.00) | – | 1.25 (1.00–1.50) | 1.00x (1.00–1.00) | – | 1.25 (1.00–1.50) | 1.00x (1.00–1.00) | – |",
		"| fleet-wait | 1.50 (1.00–2.00) | 1.00x (1.00–1.00) | 3.00 | 2.25 (1.50–3.00) | 1.50x (1.50–1.50) | 3.00 | 3.00 (2.00–4.00) | 2.00x (2.00–2.00) | 3.00 |",
		"| plain (no members) | 3.00 (2.50–3.50) |",
		"| floor (no members) | 1.00 (0.90–1.10) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "logs http") {
		t.Errorf("a panel without a members scenario was written:\n%s", out)
	}
	files := chartFiles(t, charts)
	want := []string{"members-c4_traces-grpc_cpu.png", "members-c4_traces-grpc_vs-floor.png"}
	if !slices.Equal(files, want) {
		t.Errorf("charts %v, want %v", files, want)
	}
	sweeps := findFleetSweeps([]benchRun{{file: run1, res: mustRead(t, run1)}})
	if len(sweeps) != 1 || !slices.Equal(sweeps[0].members, []int{2, 4, 16}) || !slices.Equal(sweeps[0].bases, []string{"fleet-nowait", "fleet-wait"}) {
		t.Fatalf("fleet sweeps %+v", sweeps)
	}
	cs := buildFleetCharts(sweeps[0])
	var labels []string
	for _, s := range cs[0].chart.Series {
		labels = append(labels, fmt.Sprintf("%s/%d", s.Label, len(s.Points)))
	}
	if w := []string{"fleet-nowait/3", "fleet-wait/3", "plain/2", "floor/2"}; !slices.Equal(labels, w) {
		t.Errorf("series %v, want %v", labels, w)
	}
	if p := cs[0].chart.Series[3].Points; p[0].X != 2 || p[1].X != 16 || p[0].Y != 1 {
		t.Errorf("floor drawn at %+v, want flat at 1 from 2 to 16 members", p)
	}
}

func TestMemberOf(t *testing.T) {
	for _, tc := range []struct {
		in   string
		base string
		n    int
		ok   bool
	}{{"fleet@16", "fleet", 16, true}, {"fleet", "", 0, false}, {"fleet@x", "fleet", 0, false}} {
		base, n, ok := memberOf(tc.in)
		if ok != tc.ok || (ok && (base != tc.base || n != tc.n)) {
			t.Errorf("memberOf(%q) = %q, %d, %v", tc.in, base, n, ok)
		}
	}
}

func mustRead(t *testing.T, path string) e2ebench.Results {
	t.Helper()
	r, err := readRun(path)
	if err != nil {
		t.Fatal(err)
	}
	return r.res
}

// chartFiles lists the files e2echart wrote into dir.
func chartFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	return files
}
