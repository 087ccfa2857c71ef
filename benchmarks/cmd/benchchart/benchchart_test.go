// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/chart"
)

// Three rounds of a sweep and a family benchmark, interleaved as `make
// bench` writes them, with the noise go test prints around results.
const sampleOutput = `goos: linux
goarch: amd64
pkg: github.com/otelcol-sdp/otelcol-sdp/benchmarks/wirebench
cpu: AMD EPYC
BenchmarkCount/sig=traces/enc=pdata/shape=5x100/impl=otlpwire-2         	  1000	      1000 ns/op	 100.00 MB/s	       0 B/op	       0 allocs/op
BenchmarkCount/sig=traces/enc=pdata/shape=5x100/impl=walk-2             	  1000	       500 ns/op	 200.00 MB/s	       0 B/op	       0 allocs/op
BenchmarkCount/sig=traces/enc=pdata/shape=5x100/impl=pdata-2            	    10	    100000 ns/op	   1.00 MB/s	    8000 B/op	      90 allocs/op
BenchmarkSweepCutLimit/op=cut/enc=pdata/limit=4096/impl=otlpwire-2     	    10	     40000 ns/op	  10.24 MB/s	  1000 chunks	     120 B/op	       5 allocs/op
BenchmarkSweepCutLimit/op=cut/enc=pdata/limit=1048576/impl=otlpwire-2  	   100	     10000 ns/op	  40.96 MB/s	  4.000 chunks	     120 B/op	       5 allocs/op
BenchmarkSweepCutLimit/op=cut/enc=pdata/limit=4096/impl=memcpy-2       	  1000	       100 ns/op	1024.00 MB/s	  1000 chunks	       0 B/op	       0 allocs/op
BenchmarkSweepCutLimit/op=cut/enc=pdata/limit=1048576/impl=memcpy-2    	  1000	       100 ns/op	1024.00 MB/s	  4.000 chunks	       0 B/op	       0 allocs/op
PASS
ok  	github.com/otelcol-sdp/otelcol-sdp/benchmarks/wirebench	1.0s
BenchmarkCount/sig=traces/enc=pdata/shape=5x100/impl=otlpwire-2         	  1000	      3000 ns/op	  33.33 MB/s	       0 B/op	       0 allocs/op
BenchmarkCount/sig=traces/enc=pdata/shape=5x100/impl=walk-2             	  1000	       700 ns/op	 142.86 MB/s	       0 B/op	       0 allocs/op
BenchmarkCount/sig=traces/enc=pdata/shape=5x100/impl=pdata-2            	    10	    300000 ns/op	   0.33 MB/s	    8000 B/op	      90 allocs/op
BenchmarkSweepCutLimit/op=cut/enc=pdata/limit=4096/impl=otlpwire-2     	    10	     40000 ns/op	  10.24 MB/s	  1000 chunks	     120 B/op	       5 allocs/op
    some_test.go:12: a log line from a benchmark
BenchmarkCount/sig=traces/enc=pdata/shape=5x100/impl=otlpwire-2         	  1000	      2000 ns/op	  50.00 MB/s	       0 B/op	       0 allocs/op
BenchmarkCount/sig=traces/enc=pdata/shape=5x100/impl=walk-2             	  1000	       600 ns/op	 166.67 MB/s	       0 B/op	       0 allocs/op
BenchmarkCount/sig=traces/enc=pdata/shape=5x100/impl=pdata-2            	    10	    200000 ns/op	   0.50 MB/s	    8000 B/op	      90 allocs/op
`

func TestParseAndMedians(t *testing.T) {
	runs, err := parse(strings.NewReader(sampleOutput))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 14 {
		t.Fatalf("parsed %d results, want 14", len(runs))
	}
	if runs[0].name != "BenchmarkCount/sig=traces/enc=pdata/shape=5x100/impl=otlpwire" {
		t.Fatalf("name %q: the -2 suffix should be gone", runs[0].name)
	}
	if got := runs[3].metrics["chunks"]; got != 1000 {
		t.Fatalf("custom metric chunks = %v", got)
	}
	res := medians(runs)
	if len(res) != 7 {
		t.Fatalf("%d distinct benchmarks, want 7", len(res))
	}
	byName := map[string]result{}
	for _, r := range res {
		byName[r.name] = r
	}
	// Odd count: the middle value; even count: the mean of the middle two.
	if r := byName["BenchmarkCount/sig=traces/enc=pdata/shape=5x100/impl=otlpwire"]; r.runs != 3 || r.metrics["ns/op"] != 2000 {
		t.Fatalf("otlpwire median: %d runs, %v ns/op; want 3 runs, 2000", r.runs, r.metrics["ns/op"])
	}
	if r := byName["BenchmarkCount/sig=traces/enc=pdata/shape=5x100/impl=walk"]; r.metrics["ns/op"] != 600 {
		t.Fatalf("walk median %v, want 600", r.metrics["ns/op"])
	}
	if r := byName["BenchmarkSweepCutLimit/op=cut/enc=pdata/limit=4096/impl=otlpwire"]; r.runs != 2 || r.metrics["ns/op"] != 40000 {
		t.Fatalf("sweep median: %d runs %v", r.runs, r.metrics["ns/op"])
	}
	// 10.24 MB/s is 100,000 ns per KiB.
	if got := byName["BenchmarkSweepCutLimit/op=cut/enc=pdata/limit=4096/impl=otlpwire"].nsPerKB(); got < 99_999 || got > 100_001 {
		t.Fatalf("nsPerKB = %v, want 100000", got)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{5}, 5},
		{[]float64{9, 1, 5}, 5},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7, 7, 1, 100, 7}, 7},
		{nil, 0},
	} {
		if got := median(append([]float64(nil), tc.in...)); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	_, err := parse(strings.NewReader("BenchmarkX-2 	 10	 abc ns/op\n"))
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("bad value: err = %v, want an error naming line 1", err)
	}
	runs, err := parse(strings.NewReader("BenchmarkX-2 --- FAIL\nBenchmarkY\n"))
	if err != nil || len(runs) != 0 {
		t.Fatalf("non-result lines: %v, %v", runs, err)
	}
}

func TestSplitName(t *testing.T) {
	bn := splitName("BenchmarkSweepItems/op=count/enc=sdk/items=100/impl=walk")
	if bn.top != "BenchmarkSweepItems" || len(bn.keys) != 4 || bn.vals["items"] != "100" {
		t.Fatalf("%+v", bn)
	}
	if got := bn.without("items", "impl"); got != "op=count/enc=sdk" {
		t.Fatalf("without = %q", got)
	}
	if got := trimProcs("BenchmarkA/x=1-16"); got != "BenchmarkA/x=1" {
		t.Fatalf("trimProcs = %q", got)
	}
	if got := trimProcs("BenchmarkA/enc=sdk-x"); got != "BenchmarkA/enc=sdk-x" {
		t.Fatalf("trimProcs kept a non-numeric suffix badly: %q", got)
	}
}

// The command writes one decodable PNG of the requested size per sweep chart,
// with lines drawn in it, and the ratio and sweep tables.
func TestRunWritesChartsAndTables(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bench.txt")
	if err := os.WriteFile(in, []byte(sampleOutput), 0o644); err != nil {
		t.Fatal(err)
	}
	md := filepath.Join(dir, "tables.md")
	charts := filepath.Join(dir, "charts")
	if err := run(nil, strings.NewReader(""), nil); err == nil {
		t.Fatal("no arguments: want an error")
	}
	if err := run([]string{"-charts", charts, "-md", md, "-width", "640", "-height", "360", in}, nil, nil); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(charts)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "SweepCutLimit_op-cut.png" {
		t.Fatalf("charts: %v", entries)
	}
	raw, err := os.ReadFile(filepath.Join(charts, entries[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 360 {
		t.Fatalf("chart is %v, want 640x360", b)
	}
	if n := chart.CountPixels(img, chart.Palette[0]); n < 50 {
		t.Fatalf("first series colour drawn on %d pixels: no line", n)
	}
	if n := chart.CountPixels(img, chart.Palette[1]); n < 50 {
		t.Fatalf("second series colour drawn on %d pixels: no line", n)
	}

	tables, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| sig=traces/enc=pdata/shape=5x100 | 2 µs (0 allocs) | 600 ns (0 allocs) | 3.33x | 200 µs (90 allocs) | 100x |",
		"| 4K | 100000 | 1000 | 410 B | 1000 chunks |",
		"| 1M | 25000 | 1000 | 410 B | 4 chunks |",
	} {
		if !strings.Contains(string(tables), want) {
			t.Errorf("tables lack %q:\n%s", want, tables)
		}
	}
}

func TestLabels(t *testing.T) {
	if got := num(46312.7); got != "46300" {
		t.Errorf("num = %q", got)
	}
	if got := num(47.391); got != "47.4" {
		t.Errorf("num = %q", got)
	}
}
