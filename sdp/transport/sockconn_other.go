// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package transport

import "net"

// takeSocket returns conn: sockconn_linux.go's own epoll sets are for
// Linux only.
func takeSocket(conn net.Conn) net.Conn { return conn }
