// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// socketPair returns the two ends of a connected unix socket, as the
// runtime's connections.
func socketPair(t *testing.T) (a, b net.Conn) {
	t.Helper()
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	a, err = net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b = <-accepted
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// takenPair is socketPair with a taken from the runtime's poller.
func takenPair(t *testing.T) (*sockConn, net.Conn) {
	t.Helper()
	a, b := socketPair(t)
	sc, ok := takeSocket(a).(*sockConn)
	if !ok {
		t.Fatalf("takeSocket of a unix socket did not take it")
	}
	t.Cleanup(func() { sc.Close() })
	return sc, b
}

// Unix and TCP sockets are taken; anything else is used as it is.
func TestTakeSocketIsForSockets(t *testing.T) {
	takenPair(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	tc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	addr := tc.LocalAddr().String()
	got := takeSocket(tc)
	defer got.Close()
	if _, ok := got.(*sockConn); !ok {
		t.Fatalf("a TCP connection became %T", got)
	}
	if got.LocalAddr().String() != addr || got.RemoteAddr().String() != l.Addr().String() {
		t.Errorf("addresses %v → %v, want %s → %v", got.LocalAddr(), got.RemoteAddr(), addr, l.Addr())
	}
	// The connection taken was closed; its socket lives on in got.
	if _, err := tc.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the connection taken still writes: %v", err)
	}
	p, q := net.Pipe()
	defer p.Close()
	defer q.Close()
	if got := takeSocket(p); got != p {
		t.Errorf("a pipe became %T", got)
	}
	a, _ := socketPair(t)
	tlsConn := tls.Client(a, &tls.Config{InsecureSkipVerify: true})
	if got := takeSocket(tlsConn); got != net.Conn(tlsConn) {
		t.Errorf("a TLS connection became %T", got)
	}
}

// epollEntries returns, for every epoll set of this process, the event
// masks it holds for the file with inode ino.
func epollEntries(t *testing.T, ino uint64) []uint32 {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var masks []uint32
	for _, fd := range fds {
		target, err := os.Readlink("/proc/self/fd/" + fd.Name())
		if err != nil || target != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + fd.Name())
		if err != nil {
			continue
		}
		// "tfd:        7 events:     2019 data: ... ino:1a2b sdev:8"
		for line := range strings.Lines(string(info)) {
			f := strings.Fields(line)
			if len(f) < 4 || f[0] != "tfd:" || f[2] != "events:" {
				continue
			}
			for _, kv := range f {
				if v, ok := strings.CutPrefix(kv, "ino:"); ok {
					if n, err := strconv.ParseUint(v, 16, 64); err == nil && n == ino {
						m, err := strconv.ParseUint(f[3], 16, 32)
						if err != nil {
							t.Fatalf("fdinfo line %q: %v", line, err)
						}
						masks = append(masks, uint32(m))
					}
				}
			}
		}
	}
	return masks
}

// inputOnly and outputOnly read an epoll set's event mask (the kernel adds
// EPOLLERR and EPOLLHUP to every one).
func inputOnly(m uint32) bool  { return m&syscall.EPOLLIN != 0 && m&syscall.EPOLLOUT == 0 }
func outputOnly(m uint32) bool { return m&syscall.EPOLLOUT != 0 && m&syscall.EPOLLIN == 0 }

func socketInode(t *testing.T, fd int) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// The point of taking a socket: one epoll set waits on it, for input only,
// so that the peer reading what this side wrote wakes no one. A write that
// finds no room waits on a second set, which holds the socket only for the
// wait.
func TestTakenSocketIsWaitedOnForInputOnly(t *testing.T) {
	a, b := socketPair(t)
	var before uint64
	rc, _ := a.(syscall.Conn).SyscallConn()
	rc.Control(func(fd uintptr) { before = socketInode(t, int(fd)) })
	if got := epollEntries(t, before); len(got) != 1 || got[0]&syscall.EPOLLOUT == 0 {
		t.Fatalf("the runtime's socket is in epoll sets with events %#x; want one set asking for output as well (is /proc/self/fdinfo readable?)", got)
	}
	c := takeSocket(a).(*sockConn)
	defer c.Close()
	ino := socketInode(t, c.fd)
	if ino != before {
		t.Fatalf("the taken socket is inode %d, not %d", ino, before)
	}
	if got := epollEntries(t, ino); len(got) != 1 || !inputOnly(got[0]) {
		t.Fatalf("the taken socket is in epoll sets with events %#x; want exactly one, for input only", got)
	}

	// Fill the socket so that a write waits, and look while it does.
	if err := syscall.SetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_SNDBUF, 4096); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 1<<20)
	wrote := make(chan error, 1)
	go func() {
		_, err := c.Write(big)
		wrote <- err
	}()
	var waiting []uint32
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if waiting = epollEntries(t, ino); len(waiting) == 2 {
			break
		}
	}
	if len(waiting) != 2 || !(inputOnly(waiting[0]) && outputOnly(waiting[1]) || inputOnly(waiting[1]) && outputOnly(waiting[0])) {
		t.Fatalf("while a write waits the socket is in sets with events %#x; want one for input only and one for output only", waiting)
	}
	if _, err := io.CopyN(io.Discard, b, int64(len(big))); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if got := epollEntries(t, ino); len(got) != 1 || !inputOnly(got[0]) {
		t.Fatalf("after the write the socket is in sets with events %#x; want only the one for input", got)
	}
}

// What arrives is read, a read waits for data, and the peer's close is
// io.EOF.
func TestTakenSocketReadWaitsAndEnds(t *testing.T) {
	c, b := takenPair(t)
	go func() {
		time.Sleep(20 * time.Millisecond) // the read below waits for it
		b.Write([]byte("hello"))
		b.Close()
	}()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "hello" {
		t.Fatalf("read %q, %v; want hello", got, err)
	}
	if n, err := c.Read(make([]byte, 4)); n != 0 || err != io.EOF {
		t.Errorf("after the end: %d, %v; want 0, io.EOF", n, err)
	}
	if n, err := c.Read(nil); n != 0 || err != nil {
		t.Errorf("an empty read: %d, %v; want 0, nil", n, err)
	}
}

// After a read that emptied the socket, what arrives before the next Read
// or while it waits is read, and so is what a full buffer left behind.
func TestTakenSocketReadsWhatArrivesAfterAShortRead(t *testing.T) {
	c, b := takenPair(t)
	c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a missed arrival fails, not hangs
	buf := make([]byte, 8)
	b.Write([]byte("abc"))
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "abc" {
		t.Fatalf("read %q, %v; want abc", buf[:n], err)
	}
	b.Write([]byte("def")) // arrives before the next Read begins
	time.Sleep(10 * time.Millisecond)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "def" {
		t.Fatalf("read %q, %v; want def", buf[:n], err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond) // arrives while the next Read waits
		b.Write([]byte("0123456789"))
	}()
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "01234567" {
		t.Fatalf("read %q, %v; want 01234567", buf[:n], err)
	}
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "89" {
		t.Fatalf("read %q, %v; want 89", buf[:n], err)
	}
}

// A read deadline is a timeout a net.Error reports, even one set while
// the read waits; a Close from another goroutine ends a waiting read with
// net.ErrClosed, and the socket is closed once that read has returned.
func TestTakenSocketReadDeadlineAndClose(t *testing.T) {
	c, b := takenPair(t)
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.Read(make([]byte, 8))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v, want a timeout", err)
	}
	c.SetReadDeadline(time.Time{})
	go func() {
		time.Sleep(20 * time.Millisecond)
		c.SetDeadline(time.Now().Add(10 * time.Millisecond))
	}()
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read whose deadline was set while it waited: %v, want a timeout", err)
	}
	c.SetDeadline(time.Time{})
	go func() {
		time.Sleep(20 * time.Millisecond)
		c.Close()
	}()
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read of a closed connection: %v, want net.ErrClosed", err)
	}
	// The peer sees the close.
	b.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := b.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("the peer read %d, %v after the close; want io.EOF", n, err)
	}
	if err := c.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a second Close: %v, want net.ErrClosed", err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a write after Close: %v, want net.ErrClosed", err)
	}
	if err := c.SetDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("SetDeadline after Close: %v, want net.ErrClosed", err)
	}
	if err := c.SetWriteDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("SetWriteDeadline after Close: %v, want net.ErrClosed", err)
	}
}

// A Close while a read is under way closes the socket only when that read
// returns, never under it.
func TestTakenSocketClosesAfterTheLastCall(t *testing.T) {
	c, _ := takenPair(t)
	if !c.acquire() {
		t.Fatal("acquire on an open connection failed")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fcntl(c.fd); err != nil {
		t.Fatalf("the socket was closed under a call in progress: %v", err)
	}
	if c.acquire() {
		t.Fatal("acquire after Close succeeded")
	}
	c.release()
	if _, err := fcntl(c.fd); !errors.Is(err, syscall.EBADF) {
		t.Fatalf("after the last call the socket is still open: %v", err)
	}
}

func fcntl(fd int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

// A write larger than the socket's buffer goes out whole, waiting for the
// peer to read; a write to a peer that is gone fails with EPIPE, and does
// not stop the process; a write past its deadline fails even with room.
func TestTakenSocketWriteWaitsForRoomAndReportsAGonePeer(t *testing.T) {
	c, b := takenPair(t)
	if err := syscall.SetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_SNDBUF, 4096); err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	var got []byte
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 64<<10)
		time.Sleep(20 * time.Millisecond) // the writer fills the buffer and waits
		for len(got) < len(want) {
			n, err := b.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				return
			}
		}
	}()
	if n, err := c.Write(want); n != len(want) || err != nil {
		t.Fatalf("wrote %d of %d: %v", n, len(want), err)
	}
	wg.Wait()
	if !bytes.Equal(got, want) {
		t.Fatalf("the peer read %d bytes, not the %d written", len(got), len(want))
	}
	b.Close()
	var err error
	for range 100 { // the first write after the peer's close may still succeed
		if _, err = c.Write([]byte("x")); err != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("write to a closed peer: %v, want EPIPE", err)
	}
	c.SetWriteDeadline(time.Now().Add(-time.Second))
	if n, err := c.Write([]byte("xy")); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("write past its deadline: %d, %v; want 0 bytes, os.ErrDeadlineExceeded", n, err)
	}
}

// A write that waits for room ends at its deadline, set before or while it
// waits, and at Close.
func TestTakenSocketWriteWaitEndsAtDeadlineAndClose(t *testing.T) {
	c, _ := takenPair(t)
	big := bytes.Repeat([]byte("x"), 4<<20) // more than the socket holds; no one reads
	c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	n, err := c.Write(big)
	if !errors.Is(err, os.ErrDeadlineExceeded) || n == 0 || n == len(big) {
		t.Fatalf("a write the peer does not read: %d of %d, %v; want part of it and a timeout", n, len(big), err)
	}
	c.SetWriteDeadline(time.Time{})
	go func() {
		time.Sleep(20 * time.Millisecond)
		c.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
	}()
	if _, err := c.Write(big); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a write whose deadline was set while it waited: %v, want a timeout", err)
	}
	c.SetWriteDeadline(time.Time{})
	go func() {
		time.Sleep(20 * time.Millisecond)
		c.Close()
	}()
	if _, err := c.Write(big); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a waiting write when the connection closes: %v, want net.ErrClosed", err)
	}
}

// writeBuffers writes its buffers in order, empty ones and more than one
// writev takes included, across partial writes, and leaves the caller's
// slice as it was.
func TestTakenSocketWritesBuffersInOrder(t *testing.T) {
	c, b := takenPair(t)
	if err := syscall.SetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_SNDBUF, 4096); err != nil {
		t.Fatal(err)
	}
	var bufs [][]byte
	var want []byte
	for i := range maxIovecs + 300 {
		p := []byte(fmt.Sprintf("<%d:%s>", i, strings.Repeat("y", i%97)))
		if i%5 == 0 {
			p = nil
		}
		bufs = append(bufs, p)
		want = append(want, p...)
	}
	orig := append([][]byte(nil), bufs...)
	read := make(chan []byte, 1)
	go func() {
		got, _ := io.ReadAll(bufio.NewReader(b))
		read <- got
	}()
	n, err := c.writeBuffers(bufs)
	if err != nil || n != int64(len(want)) {
		t.Fatalf("wrote %d of %d: %v", n, len(want), err)
	}
	for i := range bufs {
		if !bytes.Equal(bufs[i], orig[i]) || len(bufs[i]) != len(orig[i]) {
			t.Fatalf("buffer %d changed", i)
		}
	}
	for _, v := range c.iov[:cap(c.iov)] {
		if v.Base != nil {
			t.Fatal("the connection keeps a reference to written bytes")
		}
	}
	c.Close()
	if got := <-read; !bytes.Equal(got, want) {
		t.Fatalf("the peer read %d bytes, want %d in order", len(got), len(want))
	}
}

// consumeIovecs drops whole buffers and cuts into the first one left.
func TestConsumeIovecs(t *testing.T) {
	a, b := []byte("abc"), []byte("defg")
	mk := func() []syscall.Iovec {
		iov := []syscall.Iovec{{Base: &a[0]}, {Base: &b[0]}}
		iov[0].SetLen(len(a))
		iov[1].SetLen(len(b))
		return iov
	}
	str := func(iov []syscall.Iovec) string {
		var s []byte
		for _, v := range iov {
			s = append(s, unsafeBytes(v)...)
		}
		return string(s)
	}
	for n, want := range []string{"abcdefg", "bcdefg", "cdefg", "defg", "efg", "fg", "g", ""} {
		if got := str(consumeIovecs(mk(), n)); got != want {
			t.Errorf("consume %d: %q, want %q", n, got, want)
		}
	}
}

func unsafeBytes(v syscall.Iovec) []byte { return unsafe.Slice(v.Base, v.Len) }
