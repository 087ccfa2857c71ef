// SPDX-License-Identifier: Apache-2.0

package roundtrip

import (
	"io"
	"net"
	"os"
	"syscall"
)

// blockingConn reads and writes a unix socket with blocking system calls on
// its descriptor, bypassing the network poller: a thread sleeps in read
// until the answer arrives, as a futex waiter sleeps in the shared-memory
// mode.
type blockingConn struct {
	file *os.File // owns fd
	fd   int
}

func startUnixBlocking(dir string, size int) (peer, error) {
	cmd, conn, err := connectChild(dir, "unix-blocking", size)
	if err != nil {
		return nil, err
	}
	bc, err := newBlockingConn(conn)
	if err != nil {
		stopChild(cmd)
		return nil, err
	}
	return &streamPeer{cmd: cmd, conn: bc}, nil
}

func serveUnixBlocking(path string, size int) error {
	conn, err := net.Dial("unix", path)
	if err != nil {
		return err
	}
	bc, err := newBlockingConn(conn)
	if err != nil {
		return err
	}
	defer bc.Close()
	return echo(bc, size)
}

// newBlockingConn takes a blocking duplicate of conn's descriptor and closes
// conn, so that the duplicate is the socket's only user.
func newBlockingConn(conn net.Conn) (*blockingConn, error) {
	f, err := conn.(*net.UnixConn).File()
	conn.Close()
	if err != nil {
		return nil, err
	}
	return &blockingConn{file: f, fd: int(f.Fd())}, nil // Fd puts the descriptor in blocking mode
}

// Read is one read system call, retried when a signal interrupts it.
func (c *blockingConn) Read(b []byte) (int, error) {
	for {
		n, err := syscall.Read(c.fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(b) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes all of b.
func (c *blockingConn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := syscall.Write(c.fd, b[done:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

func (c *blockingConn) Close() error { return c.file.Close() }
