// SPDX-License-Identifier: Apache-2.0

package roundtrip

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// peerEnv names the mode and address a child process serves; the test
// binary re-executes itself with it set to become the other process.
const peerEnv = "ROUNDTRIP_PEER"

// A peer is the other process of a round trip and the parent's end of the
// channel to it.
type peer interface {
	// roundTrip sends seq and payload and returns what the peer answered.
	roundTrip(seq uint32, payload []byte) (uint32, error)
	// pid is the peer process's id.
	pid() int
	// close tells the peer to exit and waits until it has.
	close() error
}

// startChild runs the test binary as a peer serving mode at addr, for
// requests carrying size bytes.
func startChild(mode string, size int, addr string) (*exec.Cmd, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s:%d:%s", peerEnv, mode, size, addr))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd, cmd.Start()
}

// servePeer is the child's side: it takes in every request's payload and
// answers with the request's sequence until the parent ends the exchange.
func servePeer(spec string) error {
	mode, rest, ok1 := strings.Cut(spec, ":")
	sizeText, addr, ok2 := strings.Cut(rest, ":")
	size, err := strconv.Atoi(sizeText)
	if !ok1 || !ok2 || err != nil || size < 0 || size > maxPayload {
		return fmt.Errorf("%s=%q: want MODE:SIZE:ADDRESS with SIZE up to %d", peerEnv, spec, maxPayload)
	}
	switch mode {
	case "unix":
		return serveUnix(addr, size)
	case "unix-blocking":
		return serveUnixBlocking(addr, size)
	case "shm":
		return serveShm(addr, size)
	}
	return fmt.Errorf("%s: unknown mode %q", peerEnv, mode)
}

// maxPayload bounds a request's payload: the shared mapping holds one.
const maxPayload = 1 << 20

// request lays out a request on a stream: the sequence, then the payload.
func request(seq uint32, payload []byte, dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst[:0], seq)
	return append(dst, payload...)
}

// streamPeer talks to its child over a unix stream socket: a request is a
// write, its answer a read. Through a net.Conn the read parks the goroutine
// in Go's network poller until the child's write arrives; through a
// blockingConn it sleeps in the read system call.
type streamPeer struct {
	cmd  *exec.Cmd
	conn io.ReadWriteCloser
	req  []byte
	buf  [4]byte
}

func startUnix(dir string, size int) (peer, error) {
	cmd, conn, err := connectChild(dir, "unix", size)
	if err != nil {
		return nil, err
	}
	return &streamPeer{cmd: cmd, conn: conn}, nil
}

// connectChild starts a child serving mode and returns it with the
// connection it dialled to a unix socket in dir.
func connectChild(dir, mode string, size int) (*exec.Cmd, net.Conn, error) {
	path := filepath.Join(dir, "peer.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, nil, err
	}
	defer l.Close()
	cmd, err := startChild(mode, size, path)
	if err != nil {
		return nil, nil, err
	}
	conn, err := l.Accept()
	if err != nil {
		stopChild(cmd)
		return nil, nil, err
	}
	return cmd, conn, nil
}

// stopChild kills a child whose setup failed and reaps it.
func stopChild(cmd *exec.Cmd) {
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

func (p *streamPeer) roundTrip(seq uint32, payload []byte) (uint32, error) {
	p.req = request(seq, payload, p.req)
	if _, err := p.conn.Write(p.req); err != nil {
		return 0, err
	}
	if _, err := io.ReadFull(p.conn, p.buf[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(p.buf[:]), nil
}

func (p *streamPeer) pid() int { return p.cmd.Process.Pid }

func (p *streamPeer) close() error {
	return errors.Join(p.conn.Close(), p.cmd.Wait())
}

func serveUnix(path string, size int) error {
	conn, err := net.Dial("unix", path)
	if err != nil {
		return err
	}
	defer conn.Close()
	return echo(conn, size)
}

// echo answers each request of size payload bytes on rw with its sequence
// until rw ends.
func echo(rw io.ReadWriter, size int) error {
	buf := make([]byte, 4+size)
	for {
		if _, err := io.ReadFull(rw, buf); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if _, err := rw.Write(buf[:4]); err != nil {
			return err
		}
	}
}
