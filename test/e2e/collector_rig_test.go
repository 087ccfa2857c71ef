// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/internal/demo"
	"github.com/otelcol-sdp/otelcol-sdp/test/testbin"
)

// collectorAt is a started Collector's addresses.
type collectorAt struct {
	addrs      map[string]string
	metricsURL string
}

// startCollectorFrom fills a configuration's {{name}} placeholders, writes
// it to dir/name.yaml, starts the distribution with it (and flags) and
// waits until its health check answers. Each of listen and "health" gets a
// free address, {{metrics_port}} a free port (metricsURL), and vars fill
// the rest.
func startCollectorFrom(t *testing.T, dir, name, config string, vars map[string]string, flags []string, listen ...string) collectorAt {
	t.Helper()
	c := collectorAt{addrs: map[string]string{}}
	for _, k := range append(listen, "health") {
		c.addrs[k] = freePort(t)
		config = strings.ReplaceAll(config, "{{"+k+"}}", c.addrs[k])
	}
	metrics := freePort(t)
	config = strings.ReplaceAll(config, "{{metrics_port}}", metrics[strings.LastIndexByte(metrics, ':')+1:])
	c.metricsURL = "http://" + metrics + "/metrics"
	for k, v := range vars {
		config = strings.ReplaceAll(config, "{{"+k+"}}", v)
	}
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	startProc(t, dir, name, testbin.Path(t, testbin.CollectorEnv), append([]string{"--config", path}, flags...)...)
	eventually(t, 60*time.Second, func() error { return demo.CheckHealth("http://" + c.addrs["health"] + "/") })
	return c
}
