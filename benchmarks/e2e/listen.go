// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/internal/procstat"
)

// waitDial waits until network/address accepts connections, the process
// exits, or timeout passes.
func waitDial(ctx context.Context, p *procstat.Process, network, address string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.DialTimeout(network, address, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		if e := p.Exited(); e != nil {
			return e
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not listen on %s within %s: %w", p.Name(), address, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// freePorts returns n TCP ports of 127.0.0.1 that were free a moment ago.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var errs []error
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			errs = append(errs, err)
			break
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, errors.Join(errs...)
}
