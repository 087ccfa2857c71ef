// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// rawConn dials endpoint and writes a Hello unless hello is nil.
func rawConn(t *testing.T, endpoint string, hello *sdp.Hello) net.Conn {
	t.Helper()
	network, address, err := ParseEndpoint(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if hello != nil {
		b, err := hello.AppendFrame(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// expectClosed reads conn until the server closes it; acks before that are
// returned.
func expectClosed(t *testing.T, conn net.Conn) []sdp.Ack {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	r := sdp.NewReader(conn, 0)
	var acks []sdp.Ack
	for {
		h, payload, err := r.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
			return acks
		}
		if err != nil {
			t.Fatalf("server did not close the connection: %v", err)
		}
		var a sdp.Ack
		if h.Type != sdp.TypeAck || a.DecodePayload(payload) != nil {
			t.Fatalf("server sent frame type %d", h.Type)
		}
		acks = append(acks, a)
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

// goodHello opens a connection for testFrame's shard.
var goodHello = sdp.Hello{ProtocolVersion: 1, Sender: "raw", Shard: 1, ShardCount: 4}

func TestServerClosesOnlyTheBadConnection(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			rec := newRecorder(nil)
			l, endpoint := listen(t, network)
			serve(t, &Server{Handler: rec}, l)

			// A healthy client connection stays up throughout.
			c := startClient(t, testSettings(t, endpoint, nil))
			set := newSettledSet(2)
			sendRetrying(t, c, []Frame{testFrame(t, "before", 10)}, set.callback(t, 0))

			frame := testFrame(t, "x", 10).Bytes
			seq2 := bytes.Clone(frame)
			if err := sdp.SetSequence(seq2, 2); err != nil {
				t.Fatal(err)
			}
			seq1 := bytes.Clone(frame)
			if err := sdp.SetSequence(seq1, 1); err != nil {
				t.Fatal(err)
			}
			badMagic := bytes.Clone(seq1)
			badMagic[0] = 'X'
			badVersion := goodHello
			badVersion.ProtocolVersion = 2
			badShard := goodHello
			badShard.Shard = 4
			cases := []struct {
				name     string
				hello    *sdp.Hello
				then     []byte
				wantAcks int
			}{
				{"no Hello", nil, seq1, 0},
				{"protocol version 2", &badVersion, nil, 0},
				{"shard outside shard count", &badShard, nil, 0},
				{"bad magic", &goodHello, badMagic, 0},
				{"sequence gap", &goodHello, seq2, 0},
				{"second Hello", &goodHello, append(bytes.Clone(seq1), mustHello(t)...), 1},
				{"truncated then closed", &goodHello, seq1[:len(seq1)-3], 0},
				{"garbage", &goodHello, []byte("GET / HTTP/1.1\r\n\r\n"), 0},
			}
			for _, tc := range cases {
				conn := rawConn(t, endpoint, tc.hello)
				if tc.then != nil {
					if _, err := conn.Write(tc.then); err != nil {
						t.Fatal(err)
					}
				}
				if tc.name == "truncated then closed" {
					conn.(interface{ CloseWrite() error }).CloseWrite()
				}
				if acks := expectClosed(t, conn); len(acks) != tc.wantAcks {
					t.Errorf("%s: %d acks before close, want %d", tc.name, len(acks), tc.wantAcks)
				}
			}

			sendRetrying(t, c, []Frame{testFrame(t, "after", 10)}, set.callback(t, 1))
			for i, err := range set.wait(t, 5*time.Second) {
				if err != nil {
					t.Errorf("frame %d on the healthy connection settled with %v", i, err)
				}
			}
			if err := shutdownClient(t, c, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if rec.names["before"] != 1 || rec.names["after"] != 1 {
				t.Errorf("healthy connection frames: %v", rec.names)
			}
			// The client's frames went over one connection, numbered 1, 2.
			healthy := 0
			for i, h := range rec.hellos {
				if h.Sender == "test/"+t.Name() {
					healthy++
					if seqs := rec.seqs[fmt.Sprint(i)]; len(seqs) != 2 || seqs[0] != 1 || seqs[1] != 2 {
						t.Errorf("healthy connection was disturbed: sequences %v", seqs)
					}
				}
			}
			if healthy != 1 {
				t.Errorf("client used %d connections, want 1", healthy)
			}
		})
	}
}

func mustHello(t *testing.T) []byte {
	b, err := goodHello.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestServerAcksEveryFrameInOrder writes frames in one write, so that the
// server finds them buffered together: a run of accepted frames is settled
// by one Ack for its last sequence, and every frame not accepted gets an
// Ack of its own, after one for the accepted frames before it.
func TestServerAcksEveryFrameInOrder(t *testing.T) {
	answers := map[string]sdp.Ack{
		"x3": {Status: sdp.AckRejected, Detail: "no"},
		"x4": {Status: sdp.AckRetry, Detail: "later"},
		"x5": {Status: sdp.AckRetry, Detail: "later"},
	}
	rec := newRecorder(func(name string) (sdp.AckStatus, string) {
		a := answers[name]
		return a.Status, a.Detail
	})
	l, endpoint := listen(t, "unix")
	serve(t, &Server{Handler: rec}, l)
	conn := rawConn(t, endpoint, &goodHello)
	const n = 8
	var stream []byte
	for i := 1; i <= n; i++ {
		f := testFrame(t, "x"+string(rune('0'+i)), 10).Bytes
		if err := sdp.SetSequence(f, uint64(i)); err != nil {
			t.Fatal(err)
		}
		stream = append(stream, f...)
	}
	if _, err := conn.Write(stream); err != nil {
		t.Fatal(err)
	}
	conn.(interface{ CloseWrite() error }).CloseWrite()
	acks := expectClosed(t, conn)
	want := []sdp.Ack{
		{Sequence: 2},
		{Sequence: 3, Status: sdp.AckRejected, Detail: "no"},
		{Sequence: 4, Status: sdp.AckRetry, Detail: "later"},
		{Sequence: 5, Status: sdp.AckRetry, Detail: "later"},
		{Sequence: n},
	}
	if len(acks) != len(want) {
		t.Fatalf("acks %+v, want %+v", acks, want)
	}
	for i := range want {
		if acks[i] != want[i] {
			t.Errorf("ack %d = %+v, want %+v", i, acks[i], want[i])
		}
	}
}

func TestServeAfterShutdown(t *testing.T) {
	srv := &Server{Handler: newRecorder(nil)}
	if err := srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	l, _ := listen(t, "tcp")
	if err := srv.Serve(l); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve after Shutdown = %v, want ErrServerClosed", err)
	}
}
