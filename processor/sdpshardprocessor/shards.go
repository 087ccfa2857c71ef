// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/internal/bufpool"
	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry"
	"github.com/otelcol-sdp/otelcol-sdp/internal/eject"
	"github.com/otelcol-sdp/otelcol-sdp/internal/fleet"
	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor/internal/metadata"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// registry holds the shard sets of one factory, keyed by component ID, so
// that the traces, metrics and logs processors of one configured sdpshard
// processor share one connection per shard. It lives in the factory rather
// than in a package variable so that two factories never share state.
type registry struct {
	mu   sync.Mutex
	sets map[component.ID]*shardSet
	// newSource builds the resolver of a configuration with a resolver
	// block; tests replace it to drive membership changes.
	newSource func(cfg *Config, set processor.Settings, onError func(error)) (memberSource, error)
}

func newRegistry() *registry {
	return &registry{sets: make(map[component.ID]*shardSet), newSource: newResolverSource}
}

// acquire returns the shard set of set.ID, creating it on first use, and
// counts one more user of it.
func (reg *registry) acquire(set processor.Settings, cfg *Config) (*shardSet, error) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if s, ok := reg.sets[set.ID]; ok {
		s.users++
		return s, nil
	}
	s, err := newShardSet(set, cfg, reg.newSource)
	if err != nil {
		return nil, err
	}
	s.users = 1
	reg.sets[set.ID] = s
	return s, nil
}

// release drops one user of s; the last user shuts the clients down.
func (reg *registry) release(ctx context.Context, s *shardSet) {
	reg.mu.Lock()
	s.users--
	last := s.users == 0
	if last && reg.sets[s.id] == s {
		delete(reg.sets, s.id)
	}
	reg.mu.Unlock()
	if last {
		s.shutdown(ctx)
	}
}

// shardSet is one transport.Client per shard (per member of a resolver's
// fleet) plus the telemetry they feed.
type shardSet struct {
	id     component.ID
	logger *zap.Logger
	// fleet holds the members and their clients: the snapshot batches are
	// routed over and sent to, a resolver's changes and ejections. For a
	// static endpoints list without ejection the snapshot never changes.
	fleet *fleet.Fleet
	// clientSettings are the settings of a client for endpoint.
	clientSettings func(endpoint string) transport.ClientSettings
	// keys recovers the routing key of a stored frame (the persistent
	// queue keeps frames without it) to replay it in a fleet.
	keys         *shard.Router
	queueBytes   int
	flushTimeout time.Duration
	telemetry    *metadata.TelemetryBuilder
	obs          *observer
	health       *health
	storage      *component.ID
	// frameMemory recycles the memory of frames that their sidecar
	// answered; nil with a persistent queue, whose replayed frames are
	// slices of what the storage returned, not buffers of the pool: with
	// the pool off they can never be put into it.
	frameMemory *bufpool.Pool
	// queue is the persistent queue, when storage is configured; set by
	// the first start, before any batch arrives.
	queue      *persistentQueue
	replayStop chan struct{}
	replayDone chan struct{}
	startErr   error

	users     int // guarded by registry.mu
	startOnce sync.Once
}

func newShardSet(set processor.Settings, cfg *Config, newSource func(*Config, processor.Settings, func(error)) (memberSource, error)) (*shardSet, error) {
	// set is the settings of whichever pipeline created the set first; the
	// set serves the processors of every pipeline, so its telemetry names
	// none of them.
	ts := componenttelemetry.DropPipelineAttributes(set.TelemetrySettings)
	set.TelemetrySettings = ts
	tb, err := metadata.NewTelemetryBuilder(ts)
	if err != nil {
		return nil, fmt.Errorf("creating telemetry: %w", err)
	}
	hl := newHealth(ts.Logger, cfg.Endpoints)
	obs := newObserver(tb, hl, componenttelemetry.Identity(ts, set.ID, ""), len(cfg.Endpoints))
	obs.recordZeros()
	s := &shardSet{
		id:           set.ID,
		logger:       ts.Logger,
		queueBytes:   cfg.QueueBytes,
		flushTimeout: cfg.FlushTimeout,
		telemetry:    tb,
		obs:          obs,
		health:       hl,
		storage:      cfg.Storage,
	}
	if cfg.Storage == nil {
		s.frameMemory = new(bufpool.Pool)
	}
	var tlsConfig *tls.Config
	if cfg.TLS.HasValue() {
		if tlsConfig, err = cfg.TLS.Get().LoadTLSConfig(context.Background()); err != nil {
			tb.Shutdown()
			return nil, fmt.Errorf("tls: %w", err)
		}
	}
	sender := cfg.Sender
	if sender == "" {
		sender = defaultSender(set)
	}
	var releaseFrame func([]byte)
	if s.frameMemory != nil {
		releaseFrame = s.frameMemory.Put
	}
	clientSettings := newClientSettings(cfg, sender, tlsConfig, releaseFrame, ts.Logger)
	s.clientSettings = clientSettings
	fs := fleet.Settings{
		Logger:         ts.Logger,
		QueueBytes:     cfg.QueueBytes,
		ClientSettings: clientSettings,
		Hooks: fleet.Hooks{
			MembershipChanged: func() { tb.ProcessorSdpshardMembershipChanges.Add(context.Background(), 1, obs.idAttrs) },
			ResolverError:     func() { tb.ProcessorSdpshardResolverErrors.Add(context.Background(), 1, obs.idAttrs) },
			Rerouted: func(frames int) {
				tb.ProcessorSdpshardReroutedFrames.Add(context.Background(), int64(frames), obs.idAttrs)
			},
			Undelivered: func(member string, items int) {
				tb.ProcessorSdpshardUndeliveredItems.Add(context.Background(), int64(items), obs.with(attribute.String("member", member)))
			},
			Ejected: func(attrs metric.MeasurementOption) {
				tb.ProcessorSdpshardEjections.Add(context.Background(), 1, attrs)
			},
			Room: func() {
				if s.queue != nil {
					// replay may be waiting for a member that can take a
					// stored frame.
					s.queue.signalRoom()
				}
			},
		},
	}
	if e := cfg.Ejection.Get(); e != nil {
		fs.Ejection = &fleet.Ejection{
			Policy:        eject.Policy{StallTimeout: e.StallTimeout, MaxEjectedPercent: e.MaxEjectedPercent},
			ProbeInterval: e.ProbeInterval,
		}
	}
	if cfg.hasResolver() {
		if s.keys, err = shard.NewRouter(cfg.routerSettings()); err != nil {
			tb.Shutdown()
			return nil, err
		}
		fs.NewSource = func() (memberSource, error) {
			return newSource(cfg, set, func(error) {
				tb.ProcessorSdpshardResolverErrors.Add(context.Background(), 1, obs.idAttrs)
			})
		}
		fs.Observe = func(m member) fleet.Observed {
			mo := obs.forMember(m.ID, m.Endpoint)
			return fleet.Observed{Observer: mo, Attrs: mo.attrs, Leave: mo.leave}
		}
		s.fleet = fleet.New(fs, nil)
	} else {
		var clients []*transport.Client
		for i, endpoint := range cfg.Endpoints {
			c, err := transport.NewClient(fleet.ShardSettings(s.clientSettings(endpoint), i, len(cfg.Endpoints), obs))
			if err != nil {
				tb.Shutdown()
				return nil, fmt.Errorf("endpoints[%d]: %w", i, err)
			}
			clients = append(clients, c)
		}
		observers := make([]transport.Observer, len(clients))
		for i := range observers {
			observers[i] = obs
		}
		// Without a resolver the fleet only ejects (when enabled) and
		// places the frames of the members it ejects.
		s.fleet = fleet.New(fs, fleet.NewStatic(cfg.Endpoints, clients, obs.shardAttrs, observers))
	}
	err = tb.RegisterProcessorSdpshardQueueBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
		f := s.fleet.Current()
		for i, c := range f.Clients {
			o.Observe(int64(c.QueuedBytes()), f.Attrs[i])
		}
		return nil
	})
	if err == nil {
		err = tb.RegisterProcessorSdpshardEjectedCallback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(int64(s.fleet.EjectedCount()), obs.idAttrs)
			return nil
		})
	}
	if err == nil {
		err = tb.RegisterProcessorSdpshardMembersCallback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(int64(s.fleet.Current().Members.Len()), obs.idAttrs)
			return nil
		})
	}
	if err != nil {
		tb.Shutdown()
		return nil, fmt.Errorf("registering gauges: %w", err)
	}
	// Last, so that no failure above leaves the counters registered: this
	// registration is not undone at shutdown (registerCounters).
	if err := obs.registerCounters(metadata.Meter(ts)); err != nil {
		tb.Shutdown()
		return nil, fmt.Errorf("registering counters: %w", err)
	}
	return s, nil
}

// defaultSender is the Collector's service.instance.id, else the host name,
// so that a sidecar can tell gateways apart across restarts.
func defaultSender(set processor.Settings) string {
	if v, ok := set.Resource.Attributes().Get("service.instance.id"); ok && v.AsString() != "" {
		return v.AsString()
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		return host
	}
	return "otelcol-sdp"
}

// start registers host for status reports and, with the first call,
// opens the persistent queue (when storage is configured), starts the
// clients and sends again the frames a previous run left stored.
func (s *shardSet) start(ctx context.Context, host component.Host) error {
	s.health.addHost(host)
	s.startOnce.Do(func() {
		if s.storage != nil {
			q, err := openPersistentQueue(ctx, host, *s.storage, s.id, s.logger)
			if err != nil {
				s.startErr = err
				return
			}
			left, err := q.leftovers(ctx)
			if err != nil {
				_ = q.close(ctx)
				s.startErr = err
				return
			}
			s.queue = q
			go q.run()
			if s.startErr = s.fleet.Start(ctx); s.startErr != nil {
				return
			}
			s.replayStop, s.replayDone = make(chan struct{}), make(chan struct{})
			go s.replay(left)
			return
		}
		s.startErr = s.fleet.Start(ctx)
	})
	return s.startErr
}

// replay sends again the frames a previous run left stored, waiting for
// room in each shard's queue, until done or the shard set shuts down.
// With a static list a frame goes back to the shard it was stored for; in a
// fleet, whose members may have changed since, to the member that owns its
// resource now (once the resolver has found one). A client's queue frees
// room only when one of its frames settles, and with a persistent queue
// every Send settles through q.onSettled, which signals q.room; a fleet's
// change of members signals it too (an empty fleet has nothing in flight
// to settle). replay waits for that signal rather than polling. A signal
// left from earlier, or from another shard, only costs one more attempt.
func (s *shardSet) replay(left []storedFrame) {
	defer close(s.replayDone)
	if len(left) == 0 {
		return
	}
	items := 0
	for _, f := range left {
		items += f.frame.Items
	}
	s.logger.Info("Sending frames stored by a previous run again", zap.Int("frames", len(left)), zap.Int("items", items))
	resolved := s.keys != nil // a resolver's fleet, not an endpoints list
	for _, f := range left {
		if resolved {
			key, err := s.keys.FrameKey(f.frame.Bytes)
			if err != nil {
				s.logger.Error("A stored frame cannot be read; it stays stored", zap.Error(err), zap.Int("items", f.frame.Items))
				continue
			}
			f.frame.Key = key
		} else if n := len(s.fleet.Current().Clients); f.shard >= n {
			s.logger.Error("A stored frame belongs to a shard that no longer exists; it stays stored",
				zap.Int("shard", f.shard), zap.Int("shards", n), zap.Int("items", f.frame.Items))
			continue
		}
		for {
			var err error
			cur := s.fleet.Current()
			switch {
			case !resolved && cur.Members.Excluded(f.shard):
				// Ejected: its frames wait for it as for room; taking it
				// back in signals room.
				err = transport.ErrQueueFull
			case !resolved:
				err = cur.Clients[f.shard].Send([]transport.Frame{f.frame}, s.queue.onSettled([]uint64{f.seq}, nil))
			case cur.Members.Len() == 0:
				err = transport.ErrQueueFull // no member yet: wait as for room
			default:
				err = s.fleet.Send(cur, cur.Members.Owner(f.frame.Key), []transport.Frame{f.frame}, s.queue.onSettled([]uint64{f.seq}, nil))
			}
			if err == nil {
				break
			}
			if !errors.Is(err, transport.ErrQueueFull) && (!resolved || !errors.Is(err, shard.ErrNoMembers)) {
				// Closed: the frame stays stored for the next run. In a
				// fleet, an owner that left while the frame was on its way
				// (and no member to take it) is a change, not a shutdown:
				// wait for the next one.
				return
			}
			select {
			case <-s.replayStop:
				return
			case <-s.queue.room:
			}
		}
	}
}

// shutdown flushes every client concurrently until ctx ends or
// flush_timeout passes, whichever is first. What is left undelivered is
// logged and counted by the clients (undelivered_items); it is not returned
// because the Collector is stopping and can do nothing more with it.
func (s *shardSet) shutdown(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.flushTimeout)
	defer cancel()
	s.health.stop()
	// No more changes: the clients shut down below are the last ones.
	s.fleet.Shutdown(ctx)
	if s.replayStop != nil {
		close(s.replayStop)
		<-s.replayDone
	}
	var wg sync.WaitGroup
	for _, c := range s.fleet.Current().Clients {
		wg.Go(func() {
			if err := c.Shutdown(ctx); err != nil && !errors.Is(err, transport.ErrUndelivered) {
				s.logger.Warn("Shutting down sidecar client", zap.Error(err))
			}
		})
	}
	wg.Wait()
	if s.queue != nil {
		if err := s.queue.close(ctx); err != nil {
			s.logger.Warn("Closing the persistent queue's storage client", zap.Error(err))
		}
	}
	s.telemetry.Shutdown()
}
