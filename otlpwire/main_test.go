package otlpwire

import (
	"testing"

	"go.uber.org/goleak"
)

// The package starts no goroutines; goleak keeps it that way, as in every
// package of the project.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
