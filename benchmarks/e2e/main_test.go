// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/perfstat/perfstattest"
)

// The load generator and the sink start goroutines (clients, connections,
// the gRPC server); none may outlive them.
//
// Started as perfstattest.Setup's path, the test binary plays perf stat
// instead.
func TestMain(m *testing.M) {
	perfstattest.Run()
	goleak.VerifyTestMain(m)
}
