// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// The write side of a taken socket (sockconn_linux.go): raw writev(2)s,
// and, when the socket's buffer is full, a wait on an epoll set that holds
// the socket for output only while a write waits.

// Write writes all of b, waiting for room whenever the socket's buffer is
// full; n is what was written when it fails.
func (c *sockConn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	c.one[0] = b
	n, err := c.writeLocked(c.one[:])
	c.one[0] = nil
	c.wmu.Unlock()
	return int(n), err
}

// writeBuffers writes bufs in order with writev(2), as net.Buffers.WriteTo
// does for the runtime's sockets; bufs is left as it was.
func (c *sockConn) writeBuffers(bufs [][]byte) (int64, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(bufs)
}

// maxIovecs is the most buffers one writev(2) takes (IOV_MAX).
const maxIovecs = 1024

func (c *sockConn) writeLocked(bufs [][]byte) (int64, error) {
	if !c.acquire() {
		return 0, net.ErrClosed
	}
	defer c.release()
	// A write past its deadline fails even when there is room, as the
	// runtime's sockets do.
	if d := c.wdl.Load(); d != 0 && time.Now().UnixNano() >= d {
		return 0, os.ErrDeadlineExceeded
	}
	var total int64
	for len(bufs) > 0 {
		c.iov = c.iov[:0]
		for _, b := range bufs[:min(len(bufs), maxIovecs)] {
			if len(b) > 0 {
				v := syscall.Iovec{Base: &b[0]}
				v.SetLen(len(b))
				c.iov = append(c.iov, v)
			}
		}
		bufs = bufs[min(len(bufs), maxIovecs):]
		n, err := c.writeIovecs()
		total += n
		clear(c.iov) // no reference to the caller's bytes stays behind
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// writeIovecs writes all of c.iov, which it consumes.
func (c *sockConn) writeIovecs() (int64, error) {
	var total int64
	iov := c.iov
	for len(iov) > 0 {
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITEV, uintptr(c.fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
		switch errno {
		case 0:
			total += int64(n)
			iov = consumeIovecs(iov, int(n))
		case syscall.EINTR:
		case syscall.EAGAIN:
			if err := c.waitWritable(); err != nil {
				return total, err
			}
		default:
			return total, os.NewSyscallError("writev", errno)
		}
	}
	return total, nil
}

// consumeIovecs drops the first n bytes of iov.
func consumeIovecs(iov []syscall.Iovec, n int) []syscall.Iovec {
	for len(iov) > 0 && n >= int(iov[0].Len) {
		n -= int(iov[0].Len)
		iov = iov[1:]
	}
	if n > 0 {
		iov[0].Base = (*byte)(unsafe.Add(unsafe.Pointer(iov[0].Base), n))
		iov[0].SetLen(int(iov[0].Len) - n)
	}
	return iov
}

// waitWritable waits until the socket has room, the write deadline passes
// or the connection closes. The socket joins the output set only for the
// wait, so that room made while no write waits wakes nobody.
func (c *sockConn) waitWritable() error {
	c.mu.Lock()
	if c.out == nil {
		if c.state.Load()&closedBit != 0 {
			c.mu.Unlock()
			return net.ErrClosed
		}
		out, err := newEpollFile(-1, 0, "sdp-socket-output")
		if err == nil {
			c.outRC, err = out.SyscallConn()
			if err == nil {
				err = out.SetReadDeadline(unixNanoTime(c.wdl.Load()))
			}
			if err != nil {
				out.Close()
			}
		}
		if err != nil {
			c.mu.Unlock()
			return err
		}
		c.out = out
	}
	rc := c.outRC
	c.mu.Unlock()

	// Control holds the set open: its number cannot be reused meanwhile.
	var ctlErr error
	if err := rc.Control(func(ep uintptr) {
		ev := syscall.EpollEvent{Events: syscall.EPOLLOUT, Fd: int32(c.fd)}
		ctlErr = syscall.EpollCtl(int(ep), syscall.EPOLL_CTL_ADD, c.fd, &ev)
	}); err != nil {
		return c.closedAs(err)
	}
	if ctlErr != nil {
		return os.NewSyscallError("epoll_ctl", ctlErr)
	}
	err := rc.Read(c.writableFn)
	rc.Control(func(ep uintptr) { syscall.EpollCtl(int(ep), syscall.EPOLL_CTL_DEL, c.fd, nil) })
	return c.closedAs(err)
}

// unixNanoTime is the time of a deadline held in Unix nanoseconds.
func unixNanoTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// writable reports whether the output set is ready, without waiting;
// false asks the runtime to wait until it is.
func (c *sockConn) writable(ep uintptr) bool {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, ep, uintptr(unsafe.Pointer(&c.probe[0])), 1, 0, 0, 0)
	return errno == 0 && n > 0
}

// SetWriteDeadline sets the deadline of Writes, waiting ones included.
func (c *sockConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.Load()&closedBit != 0 {
		return net.ErrClosed
	}
	ns := int64(0)
	if !t.IsZero() {
		ns = t.UnixNano()
	}
	c.wdl.Store(ns)
	if c.out != nil {
		return c.closedAs(c.out.SetReadDeadline(t))
	}
	return nil
}
