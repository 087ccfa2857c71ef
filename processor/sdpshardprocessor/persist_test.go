// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// storageHost is a host offering one file_storage extension.
type storageHost struct {
	component.Host
	id  component.ID
	ext extension.Extension
}

func (h *storageHost) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{h.id: h.ext}
}

// startFileStorage starts a file_storage extension on dir, as a Collector
// with `extensions: [file_storage]` would, and stops it at cleanup.
func startFileStorage(t *testing.T, dir string) *storageHost {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	id := component.NewID(f.Type())
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	return &storageHost{Host: componenttest.NewNopHost(), id: id, ext: ext}
}

func (h *storageHost) stop(t *testing.T) {
	require.NoError(t, h.ext.Shutdown(context.Background()))
}

// storedFrames counts the frames the processor left in storage.
func storedFrames(t *testing.T, host *storageHost) int {
	t.Helper()
	client, err := host.ext.(storage.Extension).GetClient(context.Background(), component.KindProcessor, component.NewIDWithName(testSettings(nil).ID.Type(), "test"), "")
	require.NoError(t, err)
	defer func() { require.NoError(t, client.Close(context.Background())) }()
	low, err := client.Get(context.Background(), lowKey)
	require.NoError(t, err)
	high, err := client.Get(context.Background(), highKey)
	require.NoError(t, err)
	n := 0
	for seq := decodeSeq(low); seq < decodeSeq(high); seq++ {
		v, err := client.Get(context.Background(), frameKey(seq))
		require.NoError(t, err)
		if v != nil {
			n++
		}
	}
	return n
}

func TestPersistentQueueReplaysAfterRestart(t *testing.T) {
	dir := t.TempDir()
	endpoints := newEndpoints(t, "unix", 2)
	sc := signalCases[0]
	run := func(host *storageHost) (component.Component, *Config) {
		cfg := testConfig(endpoints)
		cfg.Storage = &host.id
		cfg.WaitForAck = false
		cfg.FlushTimeout = 100 * time.Millisecond
		p, _ := sc.create(t, NewFactory(), testSettings(nil), cfg)
		require.NoError(t, p.Start(context.Background(), host))
		return p, cfg
	}

	// Run 1: no sidecar listens. Without wait_for_ack, OK means stored;
	// shutdown gives up on every frame, and they stay stored.
	host := startFileStorage(t, dir)
	p, _ := run(host)
	sent := map[string]bool{}
	for b := range 5 {
		got, err := sc.consume(context.Background(), p, b, 4, 3)
		require.NoError(t, err)
		for _, names := range got {
			for _, n := range names {
				sent[n] = true
			}
		}
	}
	require.Len(t, sent, 60)
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Equal(t, 20, storedFrames(t, host), "every unacknowledged frame stays stored")
	host.stop(t)

	// Run 2: the sidecars are up. The stored frames are sent again and
	// deleted once acknowledged.
	recs := []*recorder{newRecorder(), newRecorder()}
	startSidecar(t, endpoints[0], recs[0])
	startSidecar(t, endpoints[1], recs[1])
	host = startFileStorage(t, dir)
	p, _ = run(host)
	waitFor(t, "every stored item", func() bool { return len(collect(t, sc, recs).items) == len(sent) })
	d := collect(t, sc, recs)
	for n := range sent {
		require.Equal(t, 1, d.items[n], "item %s", n)
	}
	require.NoError(t, p.Shutdown(context.Background()))
	// The storage file is locked while the processor's client is open.
	assert.Zero(t, storedFrames(t, host), "acknowledged frames are deleted")
	host.stop(t)

	// Run 3: nothing is left to send again.
	host = startFileStorage(t, dir)
	p, _ = run(host)
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, p.Shutdown(context.Background()))
	host.stop(t)
	assert.Len(t, collect(t, sc, recs).items, len(sent))
	for n := range sent {
		assert.Equal(t, 1, collect(t, sc, recs).items[n], "item %s sent again after it was acknowledged", n)
	}
}

// TestReplayWaitsForRoom restarts with a queue that holds only a few of the
// frames the previous run stored: the replay fills each shard's queue, then
// must wait for acks to free room before it sends the rest. It relies on the
// settle of each acked frame waking it; nothing else would.
func TestReplayWaitsForRoom(t *testing.T) {
	dir := t.TempDir()
	endpoints := newEndpoints(t, "unix", 2)
	sc := signalCases[0]
	run := func(host *storageHost, queueBytes int) component.Component {
		cfg := testConfig(endpoints)
		cfg.Storage = &host.id
		cfg.WaitForAck = false
		cfg.FlushTimeout = 100 * time.Millisecond
		cfg.MaxFrameBytes = MinFrameBytes
		cfg.QueueBytes = queueBytes
		require.NoError(t, cfg.Validate())
		p, _ := sc.create(t, NewFactory(), testSettings(nil), cfg)
		require.NoError(t, p.Start(context.Background(), host))
		return p
	}

	// Run 1: no sidecar; 40 frames of 3 spans are stored.
	host := startFileStorage(t, dir)
	p := run(host, defaultQueueBytes)
	sent := map[string]bool{}
	for b := range 10 {
		got, err := sc.consume(context.Background(), p, b, 4, 3)
		require.NoError(t, err)
		for _, names := range got {
			for _, n := range names {
				sent[n] = true
			}
		}
	}
	require.NoError(t, p.Shutdown(context.Background()))
	require.Equal(t, 40, storedFrames(t, host))
	host.stop(t)

	// Run 2: each shard's queue holds one frame of max_frame_bytes, a few
	// of these frames; sidecars that ack every frame at once.
	recs := []*recorder{newRecorder(), newRecorder()}
	startSidecar(t, endpoints[0], recs[0])
	startSidecar(t, endpoints[1], recs[1])
	host = startFileStorage(t, dir)
	queueBytes := maxEncodedFrame(MinFrameBytes)
	p = run(host, queueBytes)
	waitFor(t, "every stored item", func() bool { return len(collect(t, sc, recs).items) == len(sent) })
	d := collect(t, sc, recs)
	for n := range sent {
		require.Equal(t, 1, d.items[n], "item %s", n)
	}
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Zero(t, storedFrames(t, host), "acknowledged frames are deleted")
	host.stop(t)

	// The premise: the queue could not hold a shard's stored frames at once.
	for shard, rec := range recs {
		size := 0
		for _, r := range rec.snapshot() {
			size += r.frame.FrameSize()
		}
		require.Greater(t, size, queueBytes, "shard %d: its frames fit the queue at once", shard)
	}
}

func TestPersistentQueueStorageMustExist(t *testing.T) {
	cfg := testConfig(newEndpoints(t, "unix", 1))
	missing := component.MustNewID("file_storage")
	cfg.Storage = &missing
	p, _ := signalCases[0].create(t, NewFactory(), testSettings(nil), cfg)
	err := p.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, `storage: extension "file_storage" is not configured`)
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestPersistentQueueLowBoundWaitsForTheOldestFrame(t *testing.T) {
	host := startFileStorage(t, t.TempDir())
	defer host.stop(t)
	owner := component.MustNewIDWithName("sdpshard", "bounds")
	q, err := openPersistentQueue(context.Background(), host, host.id, owner, zap.NewNop())
	require.NoError(t, err)
	frame := func(items int) transport.Frame { return transport.Frame{Bytes: []byte("frame"), Items: items} }
	first, err := q.persist(context.Background(), 0, []transport.Frame{frame(1), frame(2)})
	require.NoError(t, err)
	second, err := q.persist(context.Background(), 1, []transport.Frame{frame(3)})
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 1}, first)
	require.Equal(t, []uint64{2}, second)

	bounds := func() (uint64, uint64) {
		low, err := q.client.Get(context.Background(), lowKey)
		require.NoError(t, err)
		high, err := q.client.Get(context.Background(), highKey)
		require.NoError(t, err)
		return decodeSeq(low), decodeSeq(high)
	}
	// The newer frame is acknowledged first: it is deleted, but the low
	// bound stays at the older frames, which a restart must still find.
	q.onSettled(second, nil)(nil)
	q.flush()
	low, high := bounds()
	assert.Equal(t, uint64(0), low)
	assert.Equal(t, uint64(3), high)
	left, err := q.leftovers(context.Background())
	require.NoError(t, err)
	require.Len(t, left, 2)
	assert.Equal(t, 1, left[0].frame.Items)
	assert.Equal(t, 2, left[1].frame.Items)
	assert.Equal(t, "frame", string(left[1].frame.Bytes))

	// Given up at shutdown: kept, and the bound does not pass them.
	q.onSettled(first, nil)(transport.ErrUndelivered)
	q.flush()
	low, _ = bounds()
	assert.Equal(t, uint64(0), low)

	// Acknowledged after all: deleted, and the bound moves past everything.
	q.onSettled(first, nil)(nil)
	q.flush()
	low, high = bounds()
	assert.Equal(t, uint64(3), low)
	assert.Equal(t, uint64(3), high)
	close(q.stop)
	close(q.done)
	require.NoError(t, q.client.Close(context.Background()))
}

// failingStorage is a storage extension whose client reads nothing and
// fails every write.
type failingStorage struct {
	component.StartFunc
	component.ShutdownFunc
}

func (failingStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return failingClient{}, nil
}

type failingClient struct{}

func (failingClient) Get(context.Context, string) ([]byte, error) { return nil, nil }
func (failingClient) Set(context.Context, string, []byte) error   { return errors.New("disk full") }
func (failingClient) Delete(context.Context, string) error        { return errors.New("disk full") }
func (failingClient) Close(context.Context) error                 { return nil }
func (failingClient) Batch(_ context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		if op.Type != storage.Get {
			return errors.New("disk full")
		}
	}
	return nil
}

func TestStorageWriteFailureRefusesRetryably(t *testing.T) {
	endpoints := newEndpoints(t, "unix", 1)
	rec := newRecorder()
	startSidecar(t, endpoints[0], rec)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	id := component.MustNewID("file_storage")
	host := &storageHost{Host: componenttest.NewNopHost(), id: id, ext: failingStorage{}}
	cfg := testConfig(endpoints)
	cfg.Storage = &id
	cfg.WaitForAck = false
	sc := signalCases[0]
	p, _ := sc.create(t, NewFactory(), testSettings(tel), cfg)
	require.NoError(t, p.Start(context.Background(), host))
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()
	_, err := sc.consume(context.Background(), p, 0, 2, 2)
	require.ErrorContains(t, err, "disk full")
	assert.False(t, consumererror.IsPermanent(err), "the client retries")
	assert.Equal(t, int64(1), sumMetric(t, tel, "otelcol_processor_sdpshard_refused_batches", map[string]string{"reason": "storage"}))
	time.Sleep(50 * time.Millisecond)
	assert.Empty(t, rec.snapshot(), "a frame that could not be stored is not sent")
}
