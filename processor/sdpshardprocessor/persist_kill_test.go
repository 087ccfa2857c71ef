// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// killChildEnv, when set, makes TestPersistentQueueSurvivesSIGKILL the
// child process: "dir|endpoint0|endpoint1".
const killChildEnv = "SDPSHARD_TEST_KILL_CHILD"

const killBatches, killResources, killItems = 5, 4, 3

// TestPersistentQueueSurvivesSIGKILL answers batches OK from a child
// process whose sidecars are down, with storage and wait_for_ack: false,
// kills it with SIGKILL (no Shutdown runs), then starts a processor on the
// same file_storage directory with the sidecars up: every item the child
// answered OK arrives.
func TestPersistentQueueSurvivesSIGKILL(t *testing.T) {
	if v := os.Getenv(killChildEnv); v != "" {
		runKillChild(t, strings.Split(v, "|"))
		return
	}
	dir := t.TempDir()
	endpoints := newEndpoints(t, "unix", 2)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPersistentQueueSurvivesSIGKILL$", "-test.count", "1")
	cmd.Env = append(os.Environ(), killChildEnv+"="+strings.Join(append([]string{dir}, endpoints...), "|"))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	ready := make(chan bool, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if scanner.Text() == "ANSWERED OK" {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		require.True(t, ok, "the child ended before answering its batches")
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the child did not answer its batches")
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	recs := []*recorder{newRecorder(), newRecorder()}
	startSidecar(t, endpoints[0], recs[0])
	startSidecar(t, endpoints[1], recs[1])
	host := startFileStorage(t, dir)
	defer host.stop(t)
	cfg := testConfig(endpoints)
	cfg.Storage = &host.id
	sc := signalCases[0]
	p, _ := sc.create(t, NewFactory(), testSettings(nil), cfg)
	require.NoError(t, p.Start(context.Background(), host))
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()

	want := map[string]bool{}
	for b := range killBatches {
		_, sent := buildTraces(b, killResources, killItems)
		for _, names := range sent {
			for _, n := range names {
				want[n] = true
			}
		}
	}
	waitFor(t, "every item answered OK before the kill", func() bool { return len(collect(t, sc, recs).items) == len(want) })
	d := collect(t, sc, recs)
	for n := range want {
		require.GreaterOrEqual(t, d.items[n], 1, "item %s lost", n)
	}
}

// runKillChild answers batches OK with no sidecar listening, says so on
// stdout and waits to be killed.
func runKillChild(t *testing.T, args []string) {
	host := startFileStorage(t, args[0])
	cfg := testConfig(args[1:])
	cfg.Storage = &host.id
	cfg.WaitForAck = false
	sc := signalCases[0]
	p, _ := sc.create(t, NewFactory(), testSettings(nil), cfg)
	require.NoError(t, p.Start(context.Background(), host))
	for b := range killBatches {
		_, err := sc.consume(context.Background(), p, b, killResources, killItems)
		require.NoError(t, err)
	}
	os.Stdout.WriteString("\nANSWERED OK\n")
	select {} // SIGKILL ends the process; nothing is shut down
}
