// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRunExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"-h"}, 0},
		{[]string{"-listen", "tcp://127.0.0.1:1", "-hello-timeout", "5"}, 2},
		{[]string{"-listen", "tcp://127.0.0.1:1", "-max-conns", "0"}, 2},
		{[]string{"-listen", "unix:///tmp/x.sock", "-tls-cert", "c.pem", "-tls-key", "k.pem"}, 2},
		{[]string{"-listen", "tcp://127.0.0.1:0", "-tls-cert", "/nonexistent.pem", "-tls-key", "/nonexistent.key"}, 1},
		{[]string{"-listen", "tcp://127.0.0.1:0", "-cpuprofile", "/nonexistent/cpu.pprof"}, 1},
	} {
		if got := run(tc.args); got != tc.want {
			t.Errorf("run(%q) = %d, want %d", tc.args, got, tc.want)
		}
	}
}

func TestStartCPUProfileWritesAProfileOnStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := startCPUProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := startCPUProfile(filepath.Join(t.TempDir(), "second.pprof")); err == nil {
		t.Error("a second profile started while one runs")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A pprof profile is a gzipped protocol buffer.
	if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Errorf("profile starts with % x, want the gzip magic", b[:min(len(b), 4)])
	}
}
