// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"fmt"
	"io"
	"net"
	"testing"
)

// BenchmarkSocketHop measures what the kernel alone charges for moving
// bytes from one process's writes to another's reads over the kinds of
// socket the transport uses, with nothing of the SDP protocol: the part of
// the sender's and the sidecar's CPU that no change to this package can
// remove, by the size of each write. cpu-ns/KiB counts both ends (the
// benchmark runs both in this process).
func BenchmarkSocketHop(b *testing.B) {
	for _, network := range networks {
		for _, size := range []int{11 << 10, 55 << 10, 256 << 10} {
			b.Run(fmt.Sprintf("%s/write=%dKiB", network, size>>10), func(b *testing.B) {
				l, endpoint := listen(b, network)
				defer l.Close()
				kind, address, err := ParseEndpoint(endpoint)
				if err != nil {
					b.Fatal(err)
				}
				done := make(chan error, 1)
				go func() {
					conn, err := l.Accept()
					if err != nil {
						done <- err
						return
					}
					defer conn.Close()
					buf := make([]byte, 256<<10)
					_, err = io.CopyBuffer(io.Discard, struct{ io.Reader }{conn}, buf)
					done <- err
				}()
				conn, err := net.Dial(kind, address)
				if err != nil {
					b.Fatal(err)
				}
				chunk := make([]byte, size)
				b.SetBytes(int64(size))
				b.ResetTimer()
				cpu := processCPU(b)
				for range b.N {
					if _, err := conn.Write(chunk); err != nil {
						b.Fatal(err)
					}
				}
				conn.Close()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N)/float64(size>>10), "cpu-ns/KiB")
			})
		}
	}
}
