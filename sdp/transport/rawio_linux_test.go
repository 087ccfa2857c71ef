// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// socketPair returns the two ends of a connected unix socket.
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

// Sockets get the raw reader and writer; anything else is used as it is.
func TestRawIOIsForSockets(t *testing.T) {
	a, _ := socketPair(t)
	r, w := rawIO(a)
	if _, ok := r.(sysReader); !ok {
		t.Errorf("reader of a unix socket is %T", r)
	}
	if _, ok := w.(sysWriter); !ok {
		t.Errorf("writer of a unix socket is %T", w)
	}
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
	defer tc.Close()
	if r, _ := rawIO(tc); r == io.Reader(tc) {
		t.Error("a TCP connection is read without raw system calls")
	}
	p, q := net.Pipe()
	defer p.Close()
	defer q.Close()
	if r, w := rawIO(p); r != io.Reader(p) || w != io.Writer(p) {
		t.Errorf("a pipe got %T and %T, want itself", r, w)
	}
}

// What arrives is read, a read waits for data, and the peer's close is
// io.EOF.
func TestRawReadWaitsAndEnds(t *testing.T) {
	a, b := socketPair(t)
	r, _ := rawIO(a)
	go func() {
		time.Sleep(20 * time.Millisecond) // the read below waits for it
		b.Write([]byte("hello"))
		b.Close()
	}()
	got, err := io.ReadAll(r)
	if err != nil || string(got) != "hello" {
		t.Fatalf("read %q, %v; want hello", got, err)
	}
	if n, err := r.Read(make([]byte, 4)); n != 0 || err != io.EOF {
		t.Errorf("after the end: %d, %v; want 0, io.EOF", n, err)
	}
	if n, err := r.Read(nil); n != 0 || err != nil {
		t.Errorf("an empty read: %d, %v; want 0, nil", n, err)
	}
}

// A read deadline is a timeout a net.Error reports, and a Close from
// another goroutine ends a waiting read with net.ErrClosed.
func TestRawReadDeadlineAndClose(t *testing.T) {
	a, _ := socketPair(t)
	r, _ := rawIO(a)
	a.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := r.Read(make([]byte, 8))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v, want a timeout", err)
	}
	a.SetReadDeadline(time.Time{})
	go func() {
		time.Sleep(20 * time.Millisecond)
		a.Close()
	}()
	if _, err := r.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read of a closed connection: %v, want net.ErrClosed", err)
	}
}

// A write larger than the socket's buffer goes out whole, waiting for the
// peer to read; a write to a peer that is gone fails with EPIPE, and does
// not stop the process.
func TestRawWriteWaitsForRoomAndReportsAGonePeer(t *testing.T) {
	a, b := socketPair(t)
	_, w := rawIO(a)
	if err := a.(*net.UnixConn).SetWriteBuffer(4096); err != nil {
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
	if n, err := w.Write(want); n != len(want) || err != nil {
		t.Fatalf("wrote %d of %d: %v", n, len(want), err)
	}
	wg.Wait()
	if !bytes.Equal(got, want) {
		t.Fatalf("the peer read %d bytes, not the %d written", len(got), len(want))
	}
	b.Close()
	var err error
	for range 100 { // the first write after the peer's close may still succeed
		if _, err = w.Write([]byte("x")); err != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("write to a closed peer: %v, want EPIPE", err)
	}
	a.SetWriteDeadline(time.Now().Add(-time.Second))
	if n, err := w.Write([]byte("xy")); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("write past its deadline: %d, %v; want 0 bytes, os.ErrDeadlineExceeded", n, err)
	}
}
