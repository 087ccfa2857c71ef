// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"math/rand/v2"
	"time"
)

// backoff returns the wait before try number attempt (0-based): initial
// doubled per attempt up to max, then drawn uniformly from its upper half so
// that many clients that lost the same sidecar do not redial in step.
func backoff(attempt int, initial, max time.Duration) time.Duration {
	d := initial
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	half := d / 2
	if d-half <= 0 {
		return d
	}
	return half + rand.N(d-half)
}
