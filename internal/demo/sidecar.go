// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/otelcol-sdp/otelcol-sdp/internal/sidecar"
)

// statsInterval is how often the sidecars rewrite their statistics file;
// short, so that the demo sees the counts settle quickly.
const statsInterval = "200ms"

// sidecarArgs is the command line of one reference sidecar: it listens on
// endpoint, counts what it receives and keeps its statistics in statsFile.
func sidecarArgs(endpoint, statsFile string) []string {
	return []string{"-listen", endpoint, "-mode", "count", "-stats-file", statsFile, "-stats-interval", statsInterval}
}

// sidecarItems reads the items of one signal a sidecar has accepted so far
// from its statistics file. A file not written yet means nothing received.
func sidecarItems(path, signal string) (int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var stats sidecar.Stats
	if err := json.Unmarshal(b, &stats); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return int(stats.Totals[signal].Items), nil
}
