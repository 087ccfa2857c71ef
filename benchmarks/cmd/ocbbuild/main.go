// SPDX-License-Identifier: Apache-2.0

// Command ocbbuild builds a Collector from an ocb manifest into a cache
// directory, once per manifest, platform and ocb version, and prints the
// binary's path on stdout (ocb's output goes to stderr).
//
//	ocbbuild -ocb .tools/ocb-v0.161.0/builder -manifest benchmarks/anchors/tailsampling/builder-config.yaml -prefix tailsampling
//
// The Makefile builds the anchor Collectors with it (`make
// tailsampling-anchor`); the cache is the one the end-to-end benchmark
// builds its plain baseline into (the user cache, otelcol-sdp-bench).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	e2ebench "github.com/otelcol-sdp/otelcol-sdp/benchmarks/e2e"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ocbbuild", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		ocb      = fs.String("ocb", "", "ocb (builder) binary")
		manifest = fs.String("manifest", "", "ocb manifest of the Collector")
		prefix   = fs.String("prefix", "", "name of the build in the cache (the directory is PREFIX-KEY)")
		cache    = fs.String("cache", defaultCache(), "cache directory")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *ocb == "" || *manifest == "" || *prefix == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "ocbbuild: -ocb, -manifest and -prefix are required, and nothing else")
		fs.Usage()
		return 2
	}
	fmt.Fprintf(stderr, "ocbbuild: %s with %s (cached in %s)\n", *manifest, *ocb, *cache)
	bin, err := e2ebench.BuildCollector(*ocb, *manifest, *cache, *prefix, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "ocbbuild:", err)
		return 1
	}
	fmt.Fprintln(stdout, bin)
	return 0
}

// defaultCache is the end-to-end benchmark's cache: otelcol-sdp-bench in the
// user cache directory.
func defaultCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "otelcol-sdp-bench")
	}
	return filepath.Join(dir, "otelcol-sdp-bench")
}
