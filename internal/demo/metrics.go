// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// sample is one line of the Prometheus text exposition format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// wirecountItems is the Prometheus name of the wirecount processor's items
// counter as the v0.161 Collector serves it: its internal telemetry adds
// neither the _total nor a unit suffix.
const wirecountItems = "otelcol_processor_wirecount_items"

// isWirecountItems matches the wirecount processor's items counter.
func isWirecountItems(name string) bool {
	return name == wirecountItems
}

// scrape reads the Collector's Prometheus endpoint.
func scrape(url string) ([]sample, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	return parseExposition(string(body))
}

// ScrapeSum reads the Prometheus endpoint at url and returns the sum of the
// samples named name whose labels include every pair of match (nil matches
// every sample of that name). No such sample sums to zero.
func ScrapeSum(url, name string, match map[string]string) (float64, error) {
	samples, err := scrape(url)
	if err != nil {
		return 0, err
	}
	sum := 0.0
next:
	for _, s := range samples {
		if s.name != name {
			continue
		}
		for k, v := range match {
			if s.labels[k] != v {
				continue next
			}
		}
		sum += s.value
	}
	return sum, nil
}

// parseExposition parses the Prometheus text format: comment lines are
// skipped; every other line is name{label="value",...} value [timestamp].
func parseExposition(text string) ([]sample, error) {
	var out []sample
	for i, line := range splitLines(text) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d %q: %w", i+1, line, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	rest := line
	if open := strings.IndexByte(line, '{'); open >= 0 {
		s.name = line[:open]
		rest = line[open+1:]
		for {
			rest = strings.TrimLeft(rest, ", ")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.Index(rest, "=\"")
			if eq < 0 {
				return s, fmt.Errorf("label without value")
			}
			key := rest[:eq]
			value, n, err := unquoteLabel(rest[eq+2:])
			if err != nil {
				return s, err
			}
			s.labels[key] = value
			rest = rest[eq+2+n:]
		}
	} else {
		sp := strings.IndexByte(line, ' ')
		if sp < 0 {
			return s, fmt.Errorf("no value")
		}
		s.name, rest = line[:sp], line[sp:]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return s, fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, err
	}
	s.value = v
	return s, nil
}

// unquoteLabel reads a label value up to its closing quote, undoing the
// format's escapes (\\, \", \n); it returns the value and the bytes read,
// closing quote included.
func unquoteLabel(s string) (string, int, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			i++
			if i == len(s) {
				return "", 0, fmt.Errorf("unterminated escape")
			}
			if s[i] == 'n' {
				b.WriteByte('\n')
			} else {
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated label value")
}

func splitLines(s string) []string {
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}
