// SPDX-License-Identifier: Apache-2.0

package roundtrip

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"syscall"
)

// blockingPeer talks to its child over a unix stream socket too, but with
// blocking reads and writes on the socket's descriptor, bypassing the
// network poller: a thread sleeps in read until the answer arrives, as a
// futex waiter sleeps in the shared-memory mode.
type blockingPeer struct {
	cmd  *exec.Cmd
	file *os.File // owns fd
	fd   int
	req  []byte
	buf  [4]byte
}

func startUnixBlocking(dir string, size int) (peer, error) {
	cmd, conn, err := connectChild(dir, "unix-blocking", size)
	if err != nil {
		return nil, err
	}
	f, fd, err := blockingFD(conn)
	if err != nil {
		stopChild(cmd)
		return nil, err
	}
	return &blockingPeer{cmd: cmd, file: f, fd: fd}, nil
}

// blockingFD takes a blocking duplicate of conn's descriptor and closes
// conn, so that the duplicate is the socket's only user.
func blockingFD(conn net.Conn) (*os.File, int, error) {
	f, err := conn.(*net.UnixConn).File()
	conn.Close()
	if err != nil {
		return nil, 0, err
	}
	fd := int(f.Fd()) // Fd puts the descriptor in blocking mode
	return f, fd, nil
}

func (p *blockingPeer) roundTrip(seq uint32, payload []byte) (uint32, error) {
	p.req = request(seq, payload, p.req)
	if err := writeFull(p.fd, p.req); err != nil {
		return 0, err
	}
	if err := readFull(p.fd, p.buf[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(p.buf[:]), nil
}

func (p *blockingPeer) pid() int { return p.cmd.Process.Pid }

func (p *blockingPeer) close() error {
	return errors.Join(p.file.Close(), p.cmd.Wait())
}

func serveUnixBlocking(path string, size int) error {
	conn, err := net.Dial("unix", path)
	if err != nil {
		return err
	}
	f, fd, err := blockingFD(conn)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 4+size)
	for {
		if err := readFull(fd, buf); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := writeFull(fd, buf[:4]); err != nil {
			return err
		}
	}
}

func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := syscall.Read(fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return err
		case n == 0:
			return io.EOF
		}
		b = b[n:]
	}
	return nil
}

func writeFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
