// SPDX-License-Identifier: Apache-2.0

package procstat

import (
	"testing"

	"go.uber.org/goleak"
)

// AnonPeaks and Process start goroutines; none may outlive them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
