// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxUnixPath is the longest socket path Linux accepts (sun_path holds 108
// bytes including the terminating NUL).
const maxUnixPath = 107

// ParseEndpoint splits an endpoint into the network and address that the
// net package dials: "unix:///run/sdp/shard-0.sock" gives ("unix",
// "/run/sdp/shard-0.sock") and "tcp://127.0.0.1:7070" gives ("tcp",
// "127.0.0.1:7070"). A unix endpoint needs an absolute path; a tcp endpoint
// needs a host (use 0.0.0.0 to listen on every interface) and a numeric port.
// Errors wrap ErrInvalidEndpoint and say what is wrong.
func ParseEndpoint(endpoint string) (network, address string, err error) {
	scheme, rest, ok := strings.Cut(endpoint, "://")
	if !ok {
		return "", "", invalidEndpoint(endpoint, "missing scheme: want unix:///path/to/socket or tcp://host:port")
	}
	switch scheme {
	case "unix":
		// Plain ifs rather than a switch: Go's coverage profile has no
		// block for case expressions, so mutation testing could not run
		// the tests against mutants of these checks.
		if rest == "" || rest == "/" {
			return "", "", invalidEndpoint(endpoint, "missing socket path")
		}
		if !strings.HasPrefix(rest, "/") {
			return "", "", invalidEndpoint(endpoint, "socket path must be absolute (three slashes: unix:///run/sdp.sock)")
		}
		if strings.ContainsRune(rest, 0) {
			return "", "", invalidEndpoint(endpoint, "socket path contains a NUL byte")
		}
		if len(rest) > maxUnixPath {
			return "", "", invalidEndpoint(endpoint, fmt.Sprintf("socket path is %d bytes, longer than the %d a unix socket allows", len(rest), maxUnixPath))
		}
		return "unix", rest, nil
	case "tcp":
		if strings.ContainsAny(rest, "/?#") {
			return "", "", invalidEndpoint(endpoint, "a tcp endpoint is host:port without a path")
		}
		host, port, err := net.SplitHostPort(rest)
		if err != nil {
			return "", "", invalidEndpoint(endpoint, err.Error())
		}
		if host == "" {
			return "", "", invalidEndpoint(endpoint, "missing host (use 0.0.0.0 for every interface)")
		}
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return "", "", invalidEndpoint(endpoint, fmt.Sprintf("port %q is not a number from 0 to 65535", port))
		}
		return "tcp", rest, nil
	default:
		return "", "", invalidEndpoint(endpoint, fmt.Sprintf("unknown scheme %q: want unix or tcp", scheme))
	}
}

func invalidEndpoint(endpoint, why string) error {
	return fmt.Errorf("%w %q: %s", ErrInvalidEndpoint, endpoint, why)
}

// DefaultSocketMode is the permission of a unix socket that a ListenConfig
// with no SocketMode creates: only the owner may connect.
const DefaultSocketMode os.FileMode = 0o600

// ListenConfig says how a Server's listener is made.
type ListenConfig struct {
	// SocketMode is the permission of a unix socket file; zero means
	// DefaultSocketMode (0600). 0660 lets the socket's group connect. It
	// must include owner read and write, and nothing but permission bits.
	// The socket is created with this mode: it is bound in a private
	// directory (mode 0700) beside its path, given its mode and only then
	// linked at its path, so there is no moment when anyone else may
	// connect to it. That directory's path must fit a unix socket path
	// too: a path within about 16 bytes of the 107-byte limit is refused.
	SocketMode os.FileMode
	// TLS, if not nil, makes the listener serve TLS with this
	// configuration (certificates; ClientAuth and ClientCAs to require and
	// verify client certificates). It is meant for tcp:// endpoints; a
	// unix socket is protected by its mode.
	TLS *tls.Config
}

// Listen listens on endpoint with the default ListenConfig: unix sockets
// get mode 0600 and there is no TLS.
func Listen(endpoint string) (net.Listener, error) { return ListenConfig{}.Listen(endpoint) }

// Listen listens on endpoint for a Server. For a unix endpoint it first
// removes a socket file that no server answers on any more (left by a
// process that died); it refuses to remove anything that is not a socket or
// a socket that a live server still accepts on (or that it cannot tell).
// Closing the listener removes the socket file.
func (lc ListenConfig) Listen(endpoint string) (net.Listener, error) {
	network, address, err := ParseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	mode := lc.SocketMode
	if mode == 0 {
		mode = DefaultSocketMode
	}
	if mode&^os.ModePerm != 0 || mode&0o600 != 0o600 {
		return nil, fmt.Errorf("transport: socket mode %#o: want permission bits that include owner read and write (0600)", uint32(mode))
	}
	var l net.Listener
	if network == "unix" {
		if err := removeStaleSocket(address); err != nil {
			return nil, err
		}
		l, err = listenUnix(address, mode)
	} else {
		l, err = net.Listen(network, address)
	}
	if err != nil {
		return nil, fmt.Errorf("transport: listening on %s: %w", endpoint, err)
	}
	if lc.TLS != nil {
		l = tls.NewListener(l, lc.TLS)
	}
	return l, nil
}

// listenUnix binds a unix socket at path with mode and no window in which
// it has any other: see ListenConfig.SocketMode.
func listenUnix(path string, mode os.FileMode) (net.Listener, error) {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".sdp")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	if len(tmp) > maxUnixPath {
		return nil, fmt.Errorf("the socket is created as %s first, which is longer than the %d bytes a unix socket allows; use a shorter path", tmp, maxUnixPath)
	}
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ul.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, mode); err != nil {
		ul.Close()
		return nil, err
	}
	// A hard link fails if something appeared at path meanwhile, where a
	// rename would replace it.
	if err := os.Link(tmp, path); err != nil {
		ul.Close()
		return nil, err
	}
	info, err := os.Lstat(path)
	if err != nil {
		ul.Close()
		return nil, err
	}
	return &unixListener{UnixListener: ul, addr: &net.UnixAddr{Name: path, Net: "unix"}, info: info}, nil
}

// unixListener is a socket linked at its path after it was bound
// elsewhere: it reports that path and removes it when closed, unless
// another socket has taken the path since.
type unixListener struct {
	*net.UnixListener
	addr *net.UnixAddr
	info os.FileInfo
	once sync.Once
}

func (l *unixListener) Addr() net.Addr { return l.addr }

// Accept returns the next connection, reporting the socket's path as its
// local address rather than the path it was bound at.
func (l *unixListener) Accept() (net.Conn, error) {
	c, err := l.UnixListener.Accept()
	if err != nil {
		return nil, err
	}
	return &unixConn{UnixConn: c.(*net.UnixConn), local: l.addr}, nil
}

type unixConn struct {
	*net.UnixConn
	local net.Addr
}

func (c *unixConn) LocalAddr() net.Addr { return c.local }

func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	l.once.Do(func() {
		if fi, err := os.Lstat(l.addr.Name); err == nil && os.SameFile(fi, l.info) {
			os.Remove(l.addr.Name)
		}
	})
	return err
}

func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("transport: checking socket %s: %w", path, err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("transport: %s exists and is not a socket; not removing it", path)
	}
	conn, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		conn.Close()
		return fmt.Errorf("transport: socket %s is in use by a running server", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("transport: cannot tell whether socket %s is still in use, so not removing it: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("transport: removing stale socket %s: %w", path, err)
	}
	return nil
}
