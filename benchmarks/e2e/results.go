// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// ResultsVersion is the version of the Results format that this package
// writes and reads; a change that renames or drops a field bumps it.
const ResultsVersion = 1

// ErrResultsVersion means a results file was written in a format version
// this package does not read.
var ErrResultsVersion = errors.New("unsupported results format version")

// Results is one harness run in machine-readable form (benche2e -json): the
// load it ran, and for every case the figures of each round and their
// medians, as in the Markdown report. Tools that chart or compare runs read
// this instead of the report.
type Results struct {
	Version int       `json:"version"`
	Started time.Time `json:"started"`
	Command string    `json:"command"`
	// Machine names the platform, CPUs and Go version.
	Machine string `json:"machine"`
	// LoadBefore and LoadAfter are the machine's load averages (1, 5, 15
	// min) before and after the rounds.
	LoadBefore string    `json:"load_before"`
	LoadAfter  string    `json:"load_after"`
	Load       LoadShape `json:"load"`
	// Baseline and Floor name the scenarios the ratios are taken against.
	Baseline    string          `json:"baseline,omitempty"`
	Floor       string          `json:"floor,omitempty"`
	Cases       []CaseResults   `json:"cases"`
	Unavailable []Unavailable   `json:"unavailable,omitempty"`
	Failures    []FailureRecord `json:"failures,omitempty"`
}

// LoadShape is the shape of the load every case of a run was driven with.
type LoadShape struct {
	Items            int    `json:"items"`   // measured per case
	Warmup           int    `json:"warmup"`  // requests
	Clients          int    `json:"clients"` // concurrent, one connection each
	Resources        int    `json:"resources"`
	ItemsPerResource int    `json:"items_per_resource"`
	Payload          string `json:"payload"`     // PayloadSmall or PayloadSDK
	Compression      string `json:"compression"` // "none" or "gzip"
	Rounds           int    `json:"rounds"`
}

// LoadShapeOf is the load shape of a plan.
func LoadShapeOf(p Plan) LoadShape {
	c := p.Compression
	if c == "" {
		c = "none"
	}
	return LoadShape{
		Items: p.Items, Warmup: p.Warmup, Clients: p.Clients,
		Resources: p.Shape.Resources, ItemsPerResource: p.Shape.ItemsPerResource,
		Payload: p.Shape.Kind, Compression: c, Rounds: p.Rounds,
	}
}

// CaseResults is one case (scenario, signal, protocol): its medians over
// the rounds, with ranges, and each round's figures.
type CaseResults struct {
	Scenario string `json:"scenario"`
	Signal   string `json:"signal"`
	Protocol string `json:"protocol"`
	// Median holds the medians over the rounds; CPUTotal is the median of
	// the per-round sums.
	Median Figures `json:"median"`
	// CPUTotalMin and CPUTotalMax are the range of the per-round sums.
	CPUTotalMin float64 `json:"cpu_total_min"`
	CPUTotalMax float64 `json:"cpu_total_max"`
	// VsBaseline and VsFloor are CPUTotal over the reference's: the ratio
	// of the medians, and the range of the ratios of paired rounds. Absent
	// without a reference figure.
	VsBaseline *Ratio    `json:"vs_baseline,omitempty"`
	VsFloor    *Ratio    `json:"vs_floor,omitempty"`
	Rounds     []Figures `json:"rounds"`
}

// Ratio is a ratio of medians with the range of the paired per-round ratios.
type Ratio struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Figures are what one round of a case measured, or the medians of them.
// CPU figures are seconds per million items.
type Figures struct {
	Round          int     `json:"round,omitempty"` // 1-based; absent for medians
	Items          int64   `json:"items,omitempty"`
	ElapsedSeconds float64 `json:"elapsed_seconds,omitempty"`
	Retries        int64   `json:"retries,omitempty"`
	ItemsPerSec    float64 `json:"items_per_sec"`
	CPUCollector   float64 `json:"cpu_collector"`
	CPUSidecars    float64 `json:"cpu_sidecars"`
	CPUTotal       float64 `json:"cpu_total"`
	PeakRSSMB      float64 `json:"peak_rss_mb"`
	SidecarsRSSMB  float64 `json:"sidecars_rss_mb"`
	// PeakAnonMB and SidecarsAnonMB are the peak anonymous resident memory
	// (procstat.Usage.PeakAnon) in MiB: 0 when unknown, and in files
	// written before they existed.
	PeakAnonMB      float64 `json:"peak_anon_mb"`
	SidecarsAnonMB  float64 `json:"sidecars_anon_mb"`
	StartupExcluded bool    `json:"startup_excluded"`
	// Requests is the number of requests measured; absent for medians.
	Requests int64 `json:"requests,omitempty"`
	// LatencyP50Ms and LatencyP99Ms are the requests' latency percentiles
	// in milliseconds (LoadResult.Latency); absent in files written before
	// they existed.
	LatencyP50Ms float64 `json:"latency_p50_ms,omitempty"`
	LatencyP99Ms float64 `json:"latency_p99_ms,omitempty"`
	// Kernel is the system calls and context switches per request, when
	// the run counted them (-perf).
	Kernel *KernelFigures `json:"kernel,omitempty"`
}

// FailureRecord is a Failure with its error as text.
type FailureRecord struct {
	Case  string `json:"case"`
	Round int    `json:"round"`
	Error string `json:"error"`
}

// figuresOf is what one measurement gives per item.
func figuresOf(m Measurement) Figures {
	rate := 0.0
	if m.Elapsed > 0 {
		rate = float64(m.Items) / m.Elapsed.Seconds()
	}
	var kernel *KernelFigures
	if m.KernelCounted {
		kernel = &KernelFigures{Collector: perRequest(m.CollectorKernel, m.Requests), Sidecars: perRequest(m.SidecarsKernel, m.Requests)}
	}
	return Figures{
		Round: m.Round, Items: m.Items, ElapsedSeconds: m.Elapsed.Seconds(), Retries: m.Retries,
		ItemsPerSec:     rate,
		CPUCollector:    perMillion(m.Collector, m.Items),
		CPUSidecars:     perMillion(m.Sidecars, m.Items),
		CPUTotal:        perMillion(m.Collector.Add(m.Sidecars), m.Items),
		PeakRSSMB:       float64(m.Collector.PeakRSS) / (1 << 20),
		SidecarsRSSMB:   float64(m.Sidecars.PeakRSS) / (1 << 20),
		PeakAnonMB:      float64(m.Collector.PeakAnon) / (1 << 20),
		SidecarsAnonMB:  float64(m.Sidecars.PeakAnon) / (1 << 20),
		StartupExcluded: m.StartupExcluded,
		Requests:        m.Requests,
		LatencyP50Ms:    milliseconds(m.Latency.P50),
		LatencyP99Ms:    milliseconds(m.Latency.P99),
		Kernel:          kernel,
	}
}

func milliseconds(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// CaseResultsOf pairs each row of Aggregate with the measurements it was
// made of, in round order.
func CaseResultsOf(rows []Row, ms []Measurement) []CaseResults {
	out := make([]CaseResults, 0, len(rows))
	for _, r := range rows {
		c := CaseResults{
			Scenario: r.Scenario, Signal: r.Signal, Protocol: r.Protocol,
			Median: Figures{
				ItemsPerSec: r.ItemsPerSec, CPUCollector: r.CPUCollector, CPUSidecars: r.CPUSidecars,
				CPUTotal: r.CPUTotal, PeakRSSMB: r.PeakRSSMB, SidecarsRSSMB: r.SidecarsRSSMB,
				PeakAnonMB: r.PeakAnonMB, SidecarsAnonMB: r.SidecarsAnonMB,
				LatencyP50Ms: r.LatencyP50Ms, LatencyP99Ms: r.LatencyP99Ms,
				StartupExcluded: r.StartupExcluded,
				Kernel:          r.Kernel,
			},
			CPUTotalMin: r.CPUTotalMin, CPUTotalMax: r.CPUTotalMax,
			VsBaseline: ratioOrNil(r.Ratio, r.RatioMin, r.RatioMax),
			VsFloor:    ratioOrNil(r.FloorRatio, r.FloorRatioMin, r.FloorRatioMax),
		}
		for _, m := range ms {
			if m.Scenario.Name == r.Scenario && m.Signal == r.Signal && m.Protocol == r.Protocol {
				c.Rounds = append(c.Rounds, figuresOf(m))
			}
		}
		slices.SortStableFunc(c.Rounds, func(a, b Figures) int { return a.Round - b.Round })
		out = append(out, c)
	}
	return out
}

func ratioOrNil(ratio, lo, hi float64) *Ratio {
	if ratio <= 0 {
		return nil
	}
	return &Ratio{Median: ratio, Min: lo, Max: hi}
}

// FailureRecords turns failures into their JSON form.
func FailureRecords(failures []Failure) []FailureRecord {
	out := make([]FailureRecord, 0, len(failures))
	for _, f := range failures {
		out = append(out, FailureRecord{Case: f.Case, Round: f.Round, Error: f.Err.Error()})
	}
	return out
}

// WriteJSON writes r, indented, with Version set to ResultsVersion.
func (r Results) WriteJSON(w io.Writer) error {
	r.Version = ResultsVersion
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadResults reads what WriteJSON wrote. It rejects other format versions
// (ErrResultsVersion) and unknown fields, so that a renamed field fails
// loudly instead of reading as zero.
func ReadResults(rd io.Reader) (Results, error) {
	var r Results
	dec := json.NewDecoder(rd)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Results{}, err
	}
	if r.Version != ResultsVersion {
		return Results{}, fmt.Errorf("%w: %d (this reads %d)", ErrResultsVersion, r.Version, ResultsVersion)
	}
	return r, nil
}
