// SPDX-License-Identifier: Apache-2.0

package e2ebench

import "github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/perfstat"

// PerRequest is a process's (or the sidecars' summed) crossings into the
// kernel per request of the measured load (Options.Perf), from the counts of
// perfstat.Crossings.
type PerRequest struct {
	Syscalls        float64 `json:"syscalls"`
	ContextSwitches float64 `json:"context_switches"`
	Reads           float64 `json:"reads"`
	Writes          float64 `json:"writes"`
	Polls           float64 `json:"polls"`
	Scheduler       float64 `json:"scheduler"`
}

// perRequest divides c by requests; zeros for no requests.
func perRequest(c perfstat.Crossings, requests int64) PerRequest {
	if requests <= 0 {
		return PerRequest{}
	}
	r := float64(requests)
	return PerRequest{
		Syscalls: float64(c.Syscalls) / r, ContextSwitches: float64(c.ContextSwitches) / r,
		Reads: float64(c.Reads) / r, Writes: float64(c.Writes) / r, Polls: float64(c.Polls) / r, Scheduler: float64(c.Scheduler) / r,
	}
}

// KernelFigures are the crossings per request of the Collector (or the
// floor server) and of its sidecars, summed.
type KernelFigures struct {
	Collector PerRequest `json:"collector"`
	Sidecars  PerRequest `json:"sidecars"`
}

// medianKernel is the field-by-field median of ks; nil for none.
func medianKernel(ks []KernelFigures) *KernelFigures {
	if len(ks) == 0 {
		return nil
	}
	pick := func(f func(KernelFigures) float64) float64 {
		xs := make([]float64, len(ks))
		for i, k := range ks {
			xs[i] = f(k)
		}
		return Median(xs)
	}
	per := func(side func(KernelFigures) PerRequest) PerRequest {
		return PerRequest{
			Syscalls:        pick(func(k KernelFigures) float64 { return side(k).Syscalls }),
			ContextSwitches: pick(func(k KernelFigures) float64 { return side(k).ContextSwitches }),
			Reads:           pick(func(k KernelFigures) float64 { return side(k).Reads }),
			Writes:          pick(func(k KernelFigures) float64 { return side(k).Writes }),
			Polls:           pick(func(k KernelFigures) float64 { return side(k).Polls }),
			Scheduler:       pick(func(k KernelFigures) float64 { return side(k).Scheduler }),
		}
	}
	return &KernelFigures{
		Collector: per(func(k KernelFigures) PerRequest { return k.Collector }),
		Sidecars:  per(func(k KernelFigures) PerRequest { return k.Sidecars }),
	}
}
