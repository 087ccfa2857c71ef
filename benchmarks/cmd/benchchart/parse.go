// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A sample is one result line of `go test -bench` output: the benchmark name
// without its -GOMAXPROCS suffix and its metrics by unit (ns/op, MB/s, B/op,
// allocs/op and any custom ones).
type sample struct {
	name    string
	metrics map[string]float64
}

// bytesUnit is the derived metric holding the bytes each op processed.
const bytesUnit = "bytes/op"

// parse reads `go test -bench` output (several packages, several -count runs
// or several rounds appended to one file) and returns every result line in
// order. Lines that are not results (goos:, PASS, logs) are skipped; a result
// line whose values do not parse is an error naming the line.
func parse(r io.Reader) ([]sample, error) {
	var runs []sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue // a benchmark's log output, not a result
		}
		if len(f)%2 != 0 {
			return nil, fmt.Errorf("line %d: odd number of value/unit fields: %q", line, sc.Text())
		}
		rn := sample{name: trimProcs(f[0]), metrics: make(map[string]float64, len(f)/2)}
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: value %q: %v", line, f[i], err)
			}
			rn.metrics[f[i+1]] = v
		}
		if mbs, ns := rn.metrics["MB/s"], rn.metrics["ns/op"]; mbs > 0 && ns > 0 {
			// The request size, from one line's pair (medians of MB/s and
			// ns/op taken apart would not multiply back to it).
			rn.metrics[bytesUnit] = mbs * ns / 1e3
		}
		runs = append(runs, rn)
	}
	return runs, sc.Err()
}

// trimProcs drops the "-2" GOMAXPROCS suffix of a benchmark name.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

// A result is the median of every metric of one benchmark over its runs.
type result struct {
	name    string
	runs    int
	metrics map[string]float64
}

// medians groups runs by name, in order of first appearance, and takes the
// median of each metric.
func medians(runs []sample) []result {
	var order []string
	values := make(map[string]map[string][]float64)
	counts := make(map[string]int)
	for _, r := range runs {
		m, ok := values[r.name]
		if !ok {
			m = make(map[string][]float64)
			values[r.name] = m
			order = append(order, r.name)
		}
		counts[r.name]++
		for unit, v := range r.metrics {
			m[unit] = append(m[unit], v)
		}
	}
	out := make([]result, 0, len(order))
	for _, name := range order {
		res := result{name: name, runs: counts[name], metrics: make(map[string]float64)}
		for unit, vs := range values[name] {
			res.metrics[unit] = median(vs)
		}
		out = append(out, res)
	}
	return out
}

// median returns the median of vs (the mean of the middle two for an even
// count); vs is reordered.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	sort.Float64s(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// nsPerKB is the cost per KiB of input: from MB/s (set by b.SetBytes), or 0
// when the benchmark did not set its bytes.
func (r result) nsPerKB() float64 {
	mbs := r.metrics["MB/s"]
	if mbs <= 0 {
		return 0
	}
	return 1024 * 1e3 / mbs
}

// A benchName is a benchmark name split into its top-level name and its
// key=value sub-benchmark parts, in order. Parts without '=' get the key "".
type benchName struct {
	top  string
	keys []string
	vals map[string]string
}

func splitName(name string) benchName {
	parts := strings.Split(name, "/")
	bn := benchName{top: parts[0], vals: make(map[string]string)}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			k, v = "", p
		}
		bn.keys = append(bn.keys, k)
		bn.vals[k] = v
	}
	return bn
}

// without returns the name's parts other than the given keys, joined by "/".
func (bn benchName) without(skip ...string) string {
	var parts []string
	for _, k := range bn.keys {
		if !slices.Contains(skip, k) {
			parts = append(parts, k+"="+bn.vals[k])
		}
	}
	return strings.Join(parts, "/")
}
