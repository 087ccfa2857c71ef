// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package transport

import (
	"io"
	"net"
)

// rawIO returns conn as the reader and writer of a server connection: the
// raw system calls of rawio_linux.go are for Linux only.
func rawIO(conn net.Conn) (io.Reader, io.Writer) { return conn, conn }
