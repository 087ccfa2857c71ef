// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"
)

// writeWithPprof writes the configuration at src to dst with the pprof
// extension added on endpoint, so that a scenario's own file stays the one
// that is measured and a profile run differs only by the extension.
func writeWithPprof(src, dst, endpoint string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	out, err := addPprof(b, endpoint)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	return os.WriteFile(dst, out, 0o600)
}

// addPprof adds extensions::pprof with endpoint to a Collector
// configuration and lists it in service::extensions.
func addPprof(config []byte, endpoint string) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal(config, &cfg); err != nil {
		return nil, err
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	section := func(parent map[string]any, key string) (map[string]any, error) {
		switch v := parent[key].(type) {
		case nil:
			m := map[string]any{}
			parent[key] = m
			return m, nil
		case map[string]any:
			return v, nil
		default:
			return nil, fmt.Errorf("%s is a %T, not a mapping", key, v)
		}
	}
	extensions, err := section(cfg, "extensions")
	if err != nil {
		return nil, err
	}
	extensions["pprof"] = map[string]any{"endpoint": endpoint}
	service, err := section(cfg, "service")
	if err != nil {
		return nil, err
	}
	var ids []any
	switch v := service["extensions"].(type) {
	case nil:
	case []any:
		ids = v
	default:
		return nil, fmt.Errorf("service::extensions is a %T, not a list", v)
	}
	if !slices.Contains(ids, any("pprof")) {
		ids = append(ids, "pprof")
	}
	service["extensions"] = ids
	return yaml.Marshal(cfg)
}

// fetchProfile takes a CPU profile of seconds from a pprof endpoint into
// path, after waiting delay for the load to reach its pace, and then, while
// the load still runs, a heap profile into heapPath: what the process holds
// and what it allocated, to tell where its memory goes.
func fetchProfile(ctx context.Context, endpoint string, delay time.Duration, seconds int, path, heapPath string) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(delay):
	}
	if err := fetch(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", endpoint, seconds), path); err != nil {
		return err
	}
	return fetch(ctx, fmt.Sprintf("http://%s/debug/pprof/heap", endpoint), heapPath)
}

// fetch writes what GET url answers to path.
func fetch(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// pprofTop runs `go tool pprof -top` on a profile, sorted by flat or by
// cumulative value, and returns its output; extra flags (a sample index)
// come before the profile.
func pprofTop(goTool, profile string, nodes int, cum bool, extra ...string) (string, error) {
	args := []string{"tool", "pprof", "-top", fmt.Sprintf("-nodecount=%d", nodes)}
	if cum {
		args = append(args, "-cum")
	}
	args = append(args, extra...)
	out, err := exec.Command(goTool, append(args, profile)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("go tool pprof: %w", err)
	}
	return string(out), nil
}
