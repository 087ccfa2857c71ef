// SPDX-License-Identifier: Apache-2.0

package main

import (
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
	} {
		if got := run(tc.args); got != tc.want {
			t.Errorf("run(%q) = %d, want %d", tc.args, got, tc.want)
		}
	}
}
