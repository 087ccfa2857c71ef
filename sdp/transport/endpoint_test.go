package transport

import (
	"errors"
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
