// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// A conversation is one protocol state as data (testdata/conversations.json):
// what a scripted sidecar does on each connection, and how each frame the
// client sent must settle, how often the sidecar must have seen it and how
// many protocol errors the client reports. Connections past the script
// accept every frame.
type conversation struct {
	Name           string            `json:"name"`
	Frames         []string          `json:"frames"`
	Connections    [][]scriptStep    `json:"connections"`
	Expect         map[string]string `json:"expect"` // accepted, rejected or protocol
	Sent           map[string]int    `json:"sent"`
	ProtocolErrors int               `json:"protocol_errors"`
}

// scriptStep is one thing the sidecar does: read frames, write an Ack, a
// Hello (a frame a sidecar never sends), or close the connection.
type scriptStep struct {
	Read int `json:"read"`
	Ack  *struct {
		Seq         uint64 `json:"seq"`
		Status      uint8  `json:"status"`
		Detail      string `json:"detail"`
		DetailBytes int    `json:"detail_bytes"`
	} `json:"ack"`
	Hello bool `json:"hello"`
	Close bool `json:"close"`
}

func loadConversations(t *testing.T) []conversation {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "conversations.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []conversation
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 {
		t.Fatal("no conversations")
	}
	return cs
}

// scriptedSidecar plays a conversation's connections and counts the frames
// it read by name.
type scriptedSidecar struct {
	t      *testing.T
	script [][]scriptStep
	mu     sync.Mutex
	seen   map[string]int
	conns  int
}

func (s *scriptedSidecar) serve(l net.Listener) func() {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	wg.Go(func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, conn)
			mu.Unlock()
			s.mu.Lock()
			k := s.conns
			s.conns++
			s.mu.Unlock()
			wg.Go(func() {
				defer conn.Close()
				s.play(conn, k)
			})
		}
	})
	return func() {
		l.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}
}

func (s *scriptedSidecar) play(conn net.Conn, k int) {
	r := sdp.NewReader(conn, 0)
	if _, _, err := r.Next(); err != nil { // Hello
		return
	}
	read := func() (uint64, bool) {
		_, payload, err := r.Next()
		var rf sdp.ResourceFrame
		if err != nil || rf.DecodePayload(payload) != nil {
			return 0, false
		}
		s.mu.Lock()
		s.seen[frameName(&rf)]++
		s.mu.Unlock()
		return rf.Sequence, true
	}
	if k >= len(s.script) {
		for {
			seq, ok := read()
			if !ok {
				return
			}
			if _, err := conn.Write(ackFrame(s.t, sdp.Ack{Sequence: seq})); err != nil {
				return
			}
		}
	}
	for _, step := range s.script[k] {
		var out []byte
		switch {
		case step.Read > 0:
			for range step.Read {
				if _, ok := read(); !ok {
					return
				}
			}
			continue
		case step.Close:
			return
		case step.Hello:
			h := sdp.Hello{ProtocolVersion: sdp.ProtocolVersion, Sender: "sidecar", ShardCount: 1}
			out, _ = h.AppendFrame(nil)
		case step.Ack != nil:
			a := step.Ack
			detail := a.Detail + strings.Repeat("e", a.DetailBytes)
			out = encodeAck(a.Seq, sdp.AckStatus(a.Status), detail)
		}
		if _, err := conn.Write(out); err != nil {
			return
		}
	}
	// The script is over: keep the connection open, reading, until the
	// client ends it.
	for {
		if _, ok := read(); !ok {
			return
		}
	}
}

// encodeAck writes an Ack frame by hand, so that a script can send what
// sdp.Ack's encoder refuses (an undefined status, an over-long detail).
func encodeAck(seq uint64, status sdp.AckStatus, detail string) []byte {
	ok, err := (&sdp.Ack{Sequence: seq}).AppendFrame(nil)
	if err != nil {
		panic(err)
	}
	// The header ends with the payload length; the payload is the
	// sequence, the status and the detail's length and bytes.
	payloadLen := len(ok) - sdp.HeaderSize + len(detail)
	b := append([]byte(nil), ok[:sdp.HeaderSize]...)
	b[sdp.HeaderSize-4] = byte(payloadLen)
	b[sdp.HeaderSize-3] = byte(payloadLen >> 8)
	b[sdp.HeaderSize-2] = byte(payloadLen >> 16)
	b[sdp.HeaderSize-1] = byte(payloadLen >> 24)
	b = append(b, ok[sdp.HeaderSize:sdp.HeaderSize+8]...)
	b = append(b, byte(status))
	n := len(detail)
	b = append(b, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	return append(b, detail...)
}

func TestConversations(t *testing.T) {
	for _, cv := range loadConversations(t) {
		t.Run(cv.Name, func(t *testing.T) {
			l, endpoint := listen(t, "unix")
			side := &scriptedSidecar{t: t, script: cv.Connections, seen: map[string]int{}}
			stop := side.serve(l)
			defer stop()
			obs := &protocolObserved{}
			c := startClient(t, testSettings(t, endpoint, obs))
			set := newSettledSet(len(cv.Frames))
			for i, name := range cv.Frames {
				sendRetrying(t, c, []Frame{testFrame(t, name, 10)}, set.callback(t, i))
			}
			errs := set.wait(t, 10*time.Second)
			for i, name := range cv.Frames {
				if got := outcome(errs[i]); got != cv.Expect[name] {
					t.Errorf("frame %s settled %s (%v), want %s", name, got, errs[i], cv.Expect[name])
				}
			}
			// A frame sent again by mistake would show by now.
			time.Sleep(100 * time.Millisecond)
			side.mu.Lock()
			for name, want := range cv.Sent {
				if side.seen[name] != want {
					t.Errorf("the sidecar saw frame %s %d times, want %d", name, side.seen[name], want)
				}
			}
			side.mu.Unlock()
			obs.mu.Lock()
			if obs.protocolErrors != cv.ProtocolErrors {
				t.Errorf("%d protocol errors reported, want %d", obs.protocolErrors, cv.ProtocolErrors)
			}
			obs.mu.Unlock()
			if err := shutdownClient(t, c, 5*time.Second); err != nil {
				t.Error(err)
			}
		})
	}
}

// outcome names how a frame settled.
func outcome(err error) string {
	switch {
	case err == nil:
		return "accepted"
	case errors.Is(err, ErrProtocol):
		return "protocol"
	case errors.Is(err, ErrRejected):
		return "rejected"
	}
	return "failed: " + err.Error()
}
