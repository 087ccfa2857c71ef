// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	valid := []struct{ in, network, address string }{
		{"unix:///run/sdp/shard-0.sock", "unix", "/run/sdp/shard-0.sock"},
		{"tcp://127.0.0.1:7070", "tcp", "127.0.0.1:7070"},
		{"tcp://[::1]:7070", "tcp", "[::1]:7070"},
		{"tcp://sidecar.local:0", "tcp", "sidecar.local:0"},
		// The longest path a unix socket takes: 107 bytes and the NUL.
		{"unix:///" + strings.Repeat("p", maxUnixPath-1), "unix", "/" + strings.Repeat("p", maxUnixPath-1)},
	}
	for _, tc := range valid {
		network, address, err := ParseEndpoint(tc.in)
		if err != nil || network != tc.network || address != tc.address {
			t.Errorf("ParseEndpoint(%q) = %q, %q, %v; want %q, %q", tc.in, network, address, err, tc.network, tc.address)
		}
	}
	invalid := []struct{ in, why string }{
		{"", "missing scheme"},
		{"/run/sdp.sock", "missing scheme"},
		{"127.0.0.1:7070", "missing scheme"},
		{"unix://", "missing socket path"},
		{"unix://run/sdp.sock", "absolute"},
		{"unix:///" + strings.Repeat("x", 120), "longer than"},
		{"unix:///" + strings.Repeat("x", maxUnixPath), "socket path is 108 bytes"},
		{"unix:///", "missing socket path"},
		{"unix:///run/\x00sdp.sock", "NUL byte"},
		{"tcp://127.0.0.1", "missing port"},
		{"tcp://:7070", "missing host"},
		{"tcp://host:http", "not a number"},
		{"tcp://host:70000", "not a number"},
		{"tcp://host:7070/path", "without a path"},
		{"http://host:7070", "unknown scheme"},
		{"UNIX:///run/sdp.sock", "unknown scheme"},
	}
	for _, tc := range invalid {
		_, _, err := ParseEndpoint(tc.in)
		if !errors.Is(err, ErrInvalidEndpoint) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("ParseEndpoint(%q) error = %v; want ErrInvalidEndpoint saying %q", tc.in, err, tc.why)
		}
	}
}

func TestListenRemovesStaleSocketOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sock")

	// A socket file whose server is gone is replaced.
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("stale socket file should still exist: %v", err)
	}
	l, err := Listen("unix://" + path)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}

	// A live server's socket is not taken over.
	if _, err := Listen("unix://" + path); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("Listen on a live socket: %v; want an in-use error", err)
	}
	l.Close()

	// Something that is not a socket is never removed.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen("unix://" + file); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("Listen on a regular file: %v; want a not-a-socket error", err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "keep" {
		t.Errorf("regular file was touched: %q, %v", b, err)
	}
}

func TestListenCreatesTheSocketWithItsMode(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mode, want os.FileMode
	}{{0, 0o600}, {0o660, 0o660}, {0o600, 0o600}} {
		path := filepath.Join(dir, "s.sock")
		l, err := ListenConfig{SocketMode: tc.mode}.Listen("unix://" + path)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != tc.want {
			t.Errorf("mode %#o: socket file has mode %v, want %#o", tc.mode, fi.Mode(), tc.want)
		}
		if l.Addr().String() != path {
			t.Errorf("Addr %q, want %q", l.Addr(), path)
		}
		// The socket answers at its path.
		done := make(chan error, 1)
		go func() {
			c, err := l.Accept()
			if err == nil {
				if c.LocalAddr().String() != path {
					err = fmt.Errorf("accepted connection's local address %q, want %q", c.LocalAddr(), path)
				}
				c.Close()
			}
			done <- err
		}()
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatalf("dialing the socket: %v", err)
		}
		c.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		l.Close()
		if _, err := os.Lstat(path); !os.IsNotExist(err) {
			t.Errorf("socket file left after Close: %v", err)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 0 {
			t.Errorf("left in the directory: %v", entries)
		}
	}
	for _, bad := range []os.FileMode{0o400, 0o200, 0o1600, os.ModeSetuid | 0o600} {
		if _, err := (ListenConfig{SocketMode: bad}).Listen("unix://" + filepath.Join(dir, "bad.sock")); err == nil || !strings.Contains(err.Error(), "owner read and write") {
			t.Errorf("mode %v: %v, want a refusal", bad, err)
		}
	}
}

func TestListenKeepsASocketItCannotJudge(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sock")
	l, err := Listen("unix://" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// The owner cannot connect to a socket of mode 0000; whether a server is
	// behind it is unknown, so it stays.
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		t.Log("running as root: the mode does not stop connections, so the socket is seen in use")
	}
	if _, err := Listen("unix://" + path); err == nil {
		t.Error("Listen over a socket it cannot probe succeeded")
	}
	if _, err := os.Lstat(path); err != nil {
		t.Errorf("socket was removed: %v", err)
	}
}
