// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// The load generator and the sink start goroutines (clients, connections,
// the gRPC server); none may outlive them.
//
// Started with E2EBENCH_FAKE_PERF set, the test binary plays perf stat
// instead (see fakePerf).
func TestMain(m *testing.M) {
	if mode := os.Getenv("E2EBENCH_FAKE_PERF"); mode != "" {
		os.Exit(fakePerf(mode, os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}
