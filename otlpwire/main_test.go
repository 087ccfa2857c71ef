package otlpwire

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// The package starts no goroutines; TestMain keeps it that way, as goleak
// does in the project's other packages (this module depends on nothing, so
// the check is written out): after the tests, the goroutine count must fall
// back to what it was before them.
func TestMain(m *testing.M) {
	before := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "goroutines leaked: %d before the tests, %d after:\n%s\n", before, n, buf[:runtime.Stack(buf, true)])
			code = 1
		}
	}
	os.Exit(code)
}
