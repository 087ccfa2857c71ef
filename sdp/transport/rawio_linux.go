// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// A server connection's reads and Ack writes go through raw system calls
// on Linux. The Go runtime enters every ordinary system call through
// entersyscall, which wakes its monitor thread (sysmon) when that thread
// sleeps, as it does in a process that was idle: a sidecar that wakes for
// each batch of frames paid a futex wake-up of a second thread per batch,
// a fifth of its CPU in the 16-member benchmark (benchmarks/RESULTS.md,
// "Frames batched per member"). The socket is non-blocking, so a raw read
// or write returns at once; waiting for data, deadlines and Close are
// still the runtime poller's (syscall.RawConn).

// rawIO returns the reader and writer a server connection uses: raw
// system calls on conn's socket when conn has one (unix and TCP), conn
// itself otherwise (TLS, in-memory pipes).
func rawIO(conn net.Conn) (io.Reader, io.Writer) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return conn, conn
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return conn, conn
	}
	c := &sysConn{rc: rc}
	c.readFn, c.writeFn = c.read, c.write
	return sysReader{c}, sysWriter{c}
}

// sysConn holds what one read or write passes to its function, so that
// the functions handed to syscall.RawConn are made once per connection,
// not once per call. A connection's reads come from one goroutine and its
// writes from one, but a read and a write may overlap: each has its own
// fields.
type sysConn struct {
	rc              syscall.RawConn
	readFn, writeFn func(fd uintptr) bool

	rb     []byte
	rn     int
	rerrno syscall.Errno

	wb     []byte
	werrno syscall.Errno
}

type sysReader struct{ c *sysConn }

type sysWriter struct{ c *sysConn }

// Read reads what has arrived into p, waiting for the socket to be
// readable first if nothing has; io.EOF when the peer closed its side.
func (r sysReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c := r.c
	c.rb, c.rn, c.rerrno = p, 0, 0
	err := c.rc.Read(c.readFn)
	c.rb = nil
	if err != nil {
		return 0, err
	}
	if c.rerrno != 0 {
		return 0, os.NewSyscallError("read", c.rerrno)
	}
	if c.rn == 0 {
		return 0, io.EOF
	}
	return c.rn, nil
}

// read is one non-blocking read(2); false asks the poller to wait until
// the socket is readable.
func (c *sysConn) read(fd uintptr) bool {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&c.rb[0])), uintptr(len(c.rb)))
		if errno == syscall.EINTR {
			continue
		}
		if errno == syscall.EAGAIN {
			return false
		}
		c.rn, c.rerrno = int(n), errno
		return true
	}
}

// Write writes all of p, waiting for the socket to be writable whenever
// its buffer is full; n is what was written when it fails.
func (w sysWriter) Write(p []byte) (int, error) {
	c := w.c
	c.wb, c.werrno = p, 0
	err := c.rc.Write(c.writeFn)
	n := len(p) - len(c.wb)
	c.wb = nil
	if err != nil {
		return n, err
	}
	if c.werrno != 0 {
		return n, os.NewSyscallError("write", c.werrno)
	}
	return n, nil
}

// write writes what is left of wb with non-blocking write(2)s; false asks
// the poller to wait until the socket is writable.
func (c *sysConn) write(fd uintptr) bool {
	for len(c.wb) > 0 {
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&c.wb[0])), uintptr(len(c.wb)))
		if errno == syscall.EINTR {
			continue
		}
		if errno == syscall.EAGAIN {
			return false
		}
		if errno != 0 {
			c.werrno = errno
			return true
		}
		c.wb = c.wb[n:]
	}
	return true
}
