// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The package starts no goroutines; TestMain keeps it that way, as goleak
// does in the project's other packages (this module depends on nothing, so
// the check is written out): after the tests, no goroutine may remain
// besides the test binary's own.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(2 * time.Second)
		leaked := otherGoroutines()
		for len(leaked) > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			leaked = otherGoroutines()
		}
		if len(leaked) > 0 {
			fmt.Fprintf(os.Stderr, "goroutines leaked:\n\n%s\n", strings.Join(leaked, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}

// otherGoroutines returns the stacks of the goroutines other than the
// caller's and the signal handler's (os/signal's, which fuzzing starts).
func otherGoroutines() []string {
	buf := make([]byte, 1<<20)
	stacks := strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")
	var out []string
	for _, s := range stacks[1:] { // the first is the caller's
		if s = strings.TrimSpace(s); s != "" && !strings.Contains(s, "os/signal.signal_recv") {
			out = append(out, s)
		}
	}
	return out
}
