// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"errors"
	"strings"
	"testing"
)

func FuzzParseEndpoint(f *testing.F) {
	for _, seed := range []string{"unix:///run/sdp.sock", "tcp://127.0.0.1:7070", "tcp://[::1]:1", "unix://x", "tcp://:1", "http://h:1", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, endpoint string) {
		network, address, err := ParseEndpoint(endpoint)
		if err != nil {
			if !errors.Is(err, ErrInvalidEndpoint) {
				t.Fatalf("error %v does not wrap ErrInvalidEndpoint", err)
			}
			return
		}
		// An accepted endpoint is its scheme and its address, nothing else.
		if network+"://"+address != endpoint {
			t.Fatalf("%q parsed as %q %q", endpoint, network, address)
		}
		switch network {
		case "unix":
			if !strings.HasPrefix(address, "/") || len(address) > maxUnixPath {
				t.Fatalf("unix address %q accepted", address)
			}
		case "tcp":
			if strings.ContainsAny(address, "/?#") {
				t.Fatalf("tcp address %q accepted", address)
			}
		default:
			t.Fatalf("network %q", network)
		}
	})
}
