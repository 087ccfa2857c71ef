package transport

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
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
		switch {
		case rest == "" || rest == "/":
			return "", "", invalidEndpoint(endpoint, "missing socket path")
		case !strings.HasPrefix(rest, "/"):
			return "", "", invalidEndpoint(endpoint, "socket path must be absolute (three slashes: unix:///run/sdp.sock)")
		case strings.ContainsRune(rest, 0):
			return "", "", invalidEndpoint(endpoint, "socket path contains a NUL byte")
		case len(rest) > maxUnixPath:
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

// Listen listens on endpoint for a Server. For a unix endpoint it first
// removes a socket file that no server answers on any more (left by a
// process that died); it refuses to remove anything that is not a socket or
// a socket that a live server still accepts on.
func Listen(endpoint string) (net.Listener, error) {
	network, address, err := ParseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	if network == "unix" {
		if err := removeStaleSocket(address); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen(network, address)
	if err != nil {
		return nil, fmt.Errorf("transport: listening on %s: %w", endpoint, err)
	}
	return l, nil
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
	if conn, err := net.DialTimeout("unix", path, time.Second); err == nil {
		conn.Close()
		return fmt.Errorf("transport: socket %s is in use by a running server", path)
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("transport: removing stale socket %s: %w", path, err)
	}
	return nil
}
