// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"testing"

	"go.uber.org/goleak"
)

// The load generator and the sink start goroutines (clients, connections,
// the gRPC server); none may outlive them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
