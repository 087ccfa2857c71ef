// SPDX-License-Identifier: Apache-2.0

//go:build !race

package transport

import (
	"io"
	"testing"
)

// Reads and writes allocate nothing: the functions handed to the poller
// are made once per connection.
func TestRawIOAllocatesNothing(t *testing.T) {
	a, b := socketPair(t)
	_, wa := rawIO(a)
	rb, _ := rawIO(b)
	msg, buf := []byte("ping"), make([]byte, 4)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := wa.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(rb, buf); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%.1f allocations per write and read, want 0", n)
	}
}
