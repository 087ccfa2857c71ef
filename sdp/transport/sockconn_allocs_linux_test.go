// SPDX-License-Identifier: Apache-2.0

//go:build !race

package transport

import (
	"io"
	"net"
	"testing"
)

// Reads and writes of a taken socket allocate nothing: the functions
// handed to the runtime's poller are made once per connection.
func TestTakenSocketAllocatesNothing(t *testing.T) {
	a, b := socketPair(t)
	wa, rb := takeSocket(a), takeSocket(b)
	defer wa.Close()
	defer rb.Close()
	msg, buf := []byte("ping"), make([]byte, 8)
	bufs := net.Buffers{msg, msg}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := wa.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(rb, buf[:4]); err != nil {
			t.Fatal(err)
		}
		if err := writeBuffers(wa, bufs); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(rb, buf); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%.1f allocations per write and read, want 0", n)
	}
}
