// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// On Linux the client and the server take their unix and TCP sockets out of
// the Go runtime's poller and wait on them through an epoll set of their
// own that asks for input only (sockConn).
//
// The runtime registers every socket for input and output at once. A unix
// socket signals "room to write" each time its peer reads what it sent, so
// a sidecar that had answered a frame and gone to sleep was woken a second
// time, for nothing, when the Collector read that Ack; and the Collector
// likewise when the sidecar read its frame. In the 16-member benchmark that
// was 0.8 extra context switches per Ack in every sidecar
// (benchmarks/RESULTS.md, "Frames batched per member"). The own epoll set
// sits inside the runtime's (epoll sets nest), so waiting, deadlines and
// Close remain the runtime's; it only filters what wakes it. Room to write
// is waited for the same way, with a second set that holds the socket only
// while a write waits.
//
// Reads and writes themselves are raw system calls: the runtime enters an
// ordinary one through entersyscall, which wakes its monitor thread when
// that thread sleeps, as it does in a process that was idle. A sidecar that
// wakes for each batch of frames paid a futex wake-up of a second thread
// per batch for that. The socket is non-blocking, so a raw call returns at
// once.

// takeSocket returns a connection that reads and writes conn's socket as
// described above, and closes conn; it returns conn itself when conn is
// not a socket (TLS, in-memory pipes) or the socket cannot be taken.
func takeSocket(conn net.Conn) net.Conn {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return conn
	}
	switch conn.LocalAddr().(type) {
	case *net.UnixAddr, *net.TCPAddr:
	default:
		return conn
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return conn
	}
	fd := -1
	if err := rc.Control(func(s uintptr) {
		r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, s, syscall.F_DUPFD_CLOEXEC, 0)
		if errno == 0 {
			fd = int(r)
		}
	}); err != nil || fd < 0 {
		return conn
	}
	in, err := newEpollFile(fd, syscall.EPOLLIN|syscall.EPOLLRDHUP, "sdp-socket-input")
	if err != nil {
		syscall.Close(fd)
		return conn
	}
	inRC, err := in.SyscallConn()
	if err != nil {
		in.Close()
		syscall.Close(fd)
		return conn
	}
	c := &sockConn{fd: fd, local: conn.LocalAddr(), remote: conn.RemoteAddr(), in: in, inRC: inRC}
	c.readFn, c.writableFn = c.read, c.writable
	// Closing conn deletes the socket from the runtime's epoll set (the
	// runtime does so explicitly, before it closes its descriptor); the
	// socket stays open through fd.
	conn.Close()
	return c
}

// newEpollFile returns a non-blocking epoll set holding fd for events, as
// a file of the runtime's poller; events 0 makes an empty set (fd unused).
func newEpollFile(fd int, events uint32, name string) (*os.File, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if events != 0 {
		ev := syscall.EpollEvent{Events: events, Fd: int32(fd)}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			syscall.Close(ep)
			return nil, os.NewSyscallError("epoll_ctl", err)
		}
	}
	if err := syscall.SetNonblock(ep, true); err != nil {
		syscall.Close(ep)
		return nil, os.NewSyscallError("fcntl", err)
	}
	// A non-blocking descriptor joins the runtime's poller.
	return os.NewFile(uintptr(ep), name), nil
}

// sockConn is a socket taken from the runtime's poller (takeSocket). It is
// a net.Conn; one Read and one Write may run at a time each.
type sockConn struct {
	fd            int
	local, remote net.Addr

	// state counts the Reads and Writes in progress, with closedBit set
	// once Close was called: whoever leaves it at closedBit alone closes
	// fd, so that no call uses the number after it was closed (and
	// perhaps reused).
	state atomic.Int64

	// in is the epoll set that holds fd for input; a Read waits on it.
	in   *os.File
	inRC syscall.RawConn

	rmu    sync.Mutex
	readFn func(uintptr) bool
	rb     []byte
	rn     int
	rerrno syscall.Errno

	wmu        sync.Mutex
	iov        []syscall.Iovec
	one        [1][]byte
	writableFn func(uintptr) bool
	probe      [1]syscall.EpollEvent

	// wdl is the write deadline in Unix nanoseconds, 0 for none.
	wdl atomic.Int64

	// mu guards out, the epoll set a Write waits on for room, made by the
	// first Write that finds the socket's buffer full.
	mu    sync.Mutex
	out   *os.File
	outRC syscall.RawConn
}

const closedBit = 1 << 62

var _ net.Conn = (*sockConn)(nil)

// acquire counts a call in; false after Close.
func (c *sockConn) acquire() bool {
	for {
		s := c.state.Load()
		if s&closedBit != 0 {
			return false
		}
		if c.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

// release counts a call out, and closes fd when it is the last after a
// Close.
func (c *sockConn) release() {
	if c.state.Add(-1) == closedBit {
		syscall.Close(c.fd)
	}
}

// Close closes the connection; Reads and Writes waiting return
// net.ErrClosed.
func (c *sockConn) Close() error {
	s := c.state.Or(closedBit)
	if s&closedBit != 0 {
		return net.ErrClosed
	}
	c.in.Close()
	c.mu.Lock()
	if c.out != nil {
		c.out.Close()
	}
	c.mu.Unlock()
	if s == 0 {
		return syscall.Close(c.fd)
	}
	return nil
}

// Read reads what has arrived into b, waiting for input first if nothing
// has; io.EOF when the peer closed its side.
func (c *sockConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if !c.acquire() {
		return 0, net.ErrClosed
	}
	defer c.release()
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.rb, c.rn, c.rerrno = b, 0, 0
	err := c.inRC.Read(c.readFn)
	c.rb = nil
	switch {
	case err != nil:
		return 0, c.closedAs(err)
	case c.rerrno != 0:
		return 0, os.NewSyscallError("read", c.rerrno)
	case c.rn == 0:
		return 0, io.EOF
	}
	return c.rn, nil
}

// read is one non-blocking read(2) of the socket; false asks the runtime
// to wait until the input set is ready.
func (c *sockConn) read(uintptr) bool {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(c.fd), uintptr(unsafe.Pointer(&c.rb[0])), uintptr(len(c.rb)))
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.rn, c.rerrno = int(n), errno
		return true
	}
}

// closedAs reports the error of a wait that Close ended (the epoll set's
// file was closed under it) as net.ErrClosed, as the runtime's sockets do.
func (c *sockConn) closedAs(err error) error {
	if err != nil && c.state.Load()&closedBit != 0 {
		return net.ErrClosed
	}
	return err
}

// LocalAddr returns the local address of the connection taken.
func (c *sockConn) LocalAddr() net.Addr { return c.local }

// RemoteAddr returns the remote address of the connection taken.
func (c *sockConn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline sets the read and write deadlines.
func (c *sockConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// SetReadDeadline sets the deadline of Reads, waiting ones included.
func (c *sockConn) SetReadDeadline(t time.Time) error {
	return c.closedAs(c.in.SetReadDeadline(t))
}
