// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// Bounds of the hostile-clients scenario.
const (
	// idleConns is how many connections sit on the sidecar doing nothing
	// (half of them after a frame header that declares the largest frame).
	idleConns = 200
	// sidecarRSSGrowthLimit is how much the sidecar's resident memory may
	// grow while every hostile connection is open: 200 connections are
	// worth a few kilobytes each; a buffer of the declared frame length
	// each is not.
	sidecarRSSGrowthLimit = 64 << 20
)

// TestFaultSidecarHostileClients opens, against the sidecar of shard 0:
// idle connections, connections that declare the largest frame and stall,
// connections that send garbage, frames longer than any valid one, frames
// whose payload is not OTLP, and frames naming a thousand shards. The
// sidecar must stay up with bounded memory, never accept a non-OTLP payload
// into its output, keep its open files bounded, and, with all of that still
// connected, serve a well-behaved Collector with nothing lost.
func TestFaultSidecarHostileClients(t *testing.T) {
	e := newFaultEnv(t, 2)
	e.startSidecars()
	target := e.sidecars[0]
	time.Sleep(200 * time.Millisecond)
	baseline := target.proc.RSS(t)
	baseFDs := openFiles(t, target.proc.Pid())

	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("unix", target.socket)
		if err != nil {
			t.Fatalf("hostile client: dial %s: %v (the sidecar refuses connections?)", target.socket, err)
		}
		conns = append(conns, c)
		return c
	}
	// Idle connections: half send nothing, half a Hello header declaring
	// the largest frame the sidecar reads and all of it but the last KiB,
	// then stall. Written concurrently: a sidecar may stop reading them.
	filler := make([]byte, sdp.DefaultMaxFrameSize-sdp.HeaderSize-1024)
	var wg sync.WaitGroup
	var writeErrs atomic.Int32
	for i := range idleConns {
		c := dial()
		if i%2 == 1 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.SetWriteDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.Write(append(frameHeader(sdp.TypeHello, sdp.DefaultMaxFrameSize-sdp.HeaderSize), filler...)); err != nil {
					writeErrs.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	t.Logf("%d of %d connections declaring a %d-byte Hello could not send it all (closed or not read by the sidecar)",
		writeErrs.Load(), idleConns/2, sdp.DefaultMaxFrameSize)
	// Garbage instead of a Hello, and garbage after a valid Hello.
	for i := range 10 {
		c := dial()
		if i%2 == 1 {
			write(t, c, helloFrame(t, 0, 1))
		}
		junk := make([]byte, 64<<10)
		rand.Read(junk)
		write(t, c, junk)
	}
	// A ResourceFrame header declaring ~4 GiB after a valid Hello.
	for range 10 {
		c := dial()
		write(t, c, helloFrame(t, 0, 1))
		write(t, c, frameHeader(sdp.TypeResourceFrame, 0xFFFF_FFF0))
	}
	// Well-formed frames whose payload is not an OTLP request: the sidecar
	// must not answer "accepted" (and so not write them to its output).
	accepted := 0
	for range 5 {
		c := dial()
		junk := make([]byte, 512)
		rand.Read(junk)
		write(t, c, helloFrame(t, 0, 1))
		write(t, c, resourceFrame(t, 1, 0, junk))
		if status, ok := readAck(c); ok && status == sdp.AckAccepted {
			accepted++
		}
	}
	// Frames naming a thousand different shards on one connection, each a
	// valid OTLP request: the shard must be checked against the Hello, not
	// name a new output file.
	c := dial()
	write(t, c, helloFrame(t, 0, 1))
	empty := []byte{0x0a, 0x00} // ExportTraceServiceRequest{resource_spans: [{}]}
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	for seq := uint64(1); seq <= 1000; seq++ {
		if _, err := c.Write(resourceFrame(t, seq, uint32(1000+seq), empty)); err != nil {
			t.Logf("the sidecar closed the connection sending foreign shards after %d frames: %v", seq-1, err)
			break
		}
	}

	time.Sleep(time.Second)
	if target.proc.Exited() {
		t.Fatalf("the sidecar died under hostile clients:\n%s", target.proc.Tail(30))
	}
	underAttack := target.proc.RSS(t)
	fds := openFiles(t, target.proc.Pid())
	outFiles, _ := filepath.Glob(filepath.Join(target.outDir, "*"))
	t.Logf("sidecar RSS %d MiB before, %d MiB with %d hostile connections open; open files %d before, %d now; %d output files",
		baseline>>20, underAttack>>20, len(conns), baseFDs, fds, len(outFiles))
	if growth := underAttack - baseline; growth > sidecarRSSGrowthLimit {
		t.Errorf("the sidecar's RSS grew by %d MiB under hostile clients (limit %d MiB): it allocates for connections that never sent a valid Hello",
			growth>>20, sidecarRSSGrowthLimit>>20)
	}
	if accepted > 0 {
		t.Errorf("the sidecar answered \"accepted\" to %d of 5 frames whose payload is not an OTLP traces request (file mode must check the payload before acking)", accepted)
	}
	if len(outFiles) > 2 {
		t.Errorf("the sidecar created %d output files for one shard's connections: frames naming other shards than their Hello were trusted", len(outFiles))
	}

	// A well-behaved Collector, with the hostile connections still open.
	e.writeConfig(collectorSettings{})
	e.startCollector()
	l := startLoad(t, e.grpcEndpoint, smallLoad)
	time.Sleep(2 * time.Second)
	res := l.stop()
	tl := waitDelivered(t, res, deliverTimeout, e.outDirs()...)
	checkNothingLost(t, res, tl, "the sidecar under hostile clients must still serve the Collector")
	got := readReceived(t, target.outDir)
	if len(got.Count) == 0 {
		t.Errorf("the attacked sidecar received none of the Collector's spans")
	}
	if got.Invalid > 0 {
		t.Errorf("the attacked sidecar wrote %d records that are not OTLP traces requests into its output: %v", got.Invalid, got.InvalidErr)
	}
	var closed atomic.Int32
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if connClosed(c) {
				closed.Add(1)
			}
		}()
	}
	wg.Wait()
	t.Logf("the sidecar closed %d of %d hostile connections; RSS now %d MiB", closed.Load(), len(conns), target.proc.RSS(t)>>20)
	e.stopAll()
}

func write(t *testing.T, c net.Conn, b []byte) {
	t.Helper()
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(b); err != nil {
		// The sidecar may close a hostile connection at any point; that is
		// its right, not a test failure.
		t.Logf("hostile client: write: %v", err)
	}
}

func frameHeader(typ uint16, length uint32) []byte {
	b := []byte{'S', 'D', 'P', '2'}
	b = binary.LittleEndian.AppendUint16(b, typ)
	return binary.LittleEndian.AppendUint32(b, length)
}

func helloFrame(t *testing.T, shard, shards uint32) []byte {
	t.Helper()
	h := sdp.Hello{ProtocolVersion: sdp.ProtocolVersion, Sender: "hostile-client", Shard: shard, ShardCount: shards}
	b, err := h.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func resourceFrame(t *testing.T, seq uint64, shard uint32, otlp []byte) []byte {
	t.Helper()
	f := sdp.ResourceFrame{Sequence: seq, Signal: 1, Shard: shard, ItemCount: 1, OTLP: otlp}
	b, err := f.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readAck reads one Ack from c within two seconds.
func readAck(c net.Conn) (sdp.AckStatus, bool) {
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	_, payload, err := sdp.NewReader(c, 1<<20).Next()
	if err != nil {
		return 0, false
	}
	var ack sdp.Ack
	if err := ack.DecodePayload(payload); err != nil {
		return 0, false
	}
	return ack.Status, true
}

// connClosed reports whether the sidecar has closed c.
func connClosed(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	buf := make([]byte, 4096)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue // an Ack or the like: read on
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return false
		}
		return true // io.EOF or a reset: closed
	}
}

// openFiles counts the file descriptors of process pid (Linux /proc).
func openFiles(t *testing.T, pid int) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("open files of %d: %v", pid, err)
	}
	return len(entries)
}
