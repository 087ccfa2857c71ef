// SPDX-License-Identifier: Apache-2.0

package perfstat_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/perfstat/perfstattest"
)

// Started by perfstattest.Setup's path, the test binary plays perf stat;
// otherwise no goroutine of a Counter may outlive it.
func TestMain(m *testing.M) {
	perfstattest.Run()
	goleak.VerifyTestMain(m)
}
