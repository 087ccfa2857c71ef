// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"fmt"
	"strconv"
)

// childSpans is the number of child spans telemetrygen adds to each trace
// (its --child-spans flag), so one trace is 1+childSpans spans.
const childSpans = 1

// telemetrygenArgs returns the command line that makes telemetrygen send
// items of one signal for one service, as fast as it can, and how many
// items (spans, data points, log records) that is.
func telemetrygenArgs(signal, protocol, endpoint, service string, items int) ([]string, int) {
	args := []string{signal,
		"--otlp-endpoint", endpoint,
		"--otlp-insecure",
		"--service", service,
		"--workers", "1",
		"--rate", "0",
	}
	if protocol == "http" {
		args = append(args, "--otlp-http")
	}
	sent := items
	switch signal {
	case "traces":
		// A trace is a parent span plus its children: round the item count
		// down to whole traces.
		traces := max(items/(1+childSpans), 1)
		sent = traces * (1 + childSpans)
		args = append(args, "--traces", strconv.Itoa(traces), "--child-spans", strconv.Itoa(childSpans))
	case "metrics":
		// One Gauge metric with one data point per generated metric.
		args = append(args, "--metrics", strconv.Itoa(items), "--metric-type", "Gauge")
	case "logs":
		args = append(args, "--logs", strconv.Itoa(items))
	default:
		panic(fmt.Sprintf("demo: unknown signal %q", signal))
	}
	return args, sent
}
