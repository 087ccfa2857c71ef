// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// A peer that hangs up between frames ends its connection normally; one
// that hangs up inside a frame has lost that frame, and the server's
// warning says where the stream ended, inside the header or the payload,
// so that an operator can tell a cut connection from a peer that sends
// frames shorter than they declare. Each case is written in one write,
// so that the server finds a frame before the cut in the same read and
// the cut does not lie at the start of its read space.
func TestServerTellsWhereAPeerHungUp(t *testing.T) {
	logger, logs := observeLogs(slog.LevelDebug)
	l, endpoint := listen(t, "unix")
	srv := &Server{Handler: newRecorder(nil), Logger: logger}
	serve(t, srv, l)

	hello, err := goodHello.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	frame := testFrame(t, "whole", 40).Bytes
	if err := sdp.SetSequence(frame, 1); err != nil {
		t.Fatal(err)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, tc := range []struct {
		name  string
		bytes []byte
		acks  int
		ended string // "" for a connection that ended normally
	}{
		{"between frames", cat(hello, frame), 1, ""},
		{"inside the first header", cat(hello, frame[:5]), 0, "stream ended inside the frame header"},
		{"after a whole header", cat(hello, frame[:sdp.HeaderSize]), 0, "stream ended inside the frame payload"},
		{"inside the first payload", cat(hello, frame[:sdp.HeaderSize+3]), 0, "stream ended inside the frame payload"},
		{"inside a header after a frame", cat(hello, frame, frame[:5]), 1, "stream ended inside the frame header"},
		{"inside a payload after a frame", cat(hello, frame, frame[:sdp.HeaderSize+3]), 1, "stream ended inside the frame payload"},
	} {
		before := len(logs.All())
		conn := rawConn(t, endpoint, nil)
		if _, err := conn.Write(tc.bytes); err != nil {
			t.Fatal(err)
		}
		// Half-closed, so that the server's Acks still reach us.
		if err := conn.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		if acks := expectClosed(t, conn); len(acks) != tc.acks {
			t.Errorf("%s: %d Acks, want %d", tc.name, len(acks), tc.acks)
		}
		conn.Close()
		// The server logs why a connection ended before it closes it.
		var failed []string
		normal := 0
		for _, e := range logs.All()[before:] {
			switch e.Message {
			case "Sidecar connection failed":
				failed = append(failed, e.ContextMap()["error"].(string))
			case "Sidecar connection ended by the client":
				normal++
			}
		}
		if tc.ended == "" {
			if normal != 1 || len(failed) != 0 {
				t.Errorf("%s: %d normal ends and failures %q, want one normal end", tc.name, normal, failed)
			}
			continue
		}
		if normal != 0 || len(failed) != 1 || !strings.Contains(failed[0], tc.ended) {
			t.Errorf("%s: %d normal ends and failures %q, want one failure saying %q", tc.name, normal, failed, tc.ended)
		}
	}
}
