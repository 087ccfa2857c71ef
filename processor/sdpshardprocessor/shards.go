package sdpshardprocessor

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor/internal/metadata"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// registry holds the shard sets of one factory, keyed by component ID, so
// that the traces, metrics and logs processors of one configured sdpshard
// processor share one connection per shard. It lives in the factory rather
// than in a package variable so that two factories never share state.
type registry struct {
	mu   sync.Mutex
	sets map[component.ID]*shardSet
}

func newRegistry() *registry {
	return &registry{sets: make(map[component.ID]*shardSet)}
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
	s, err := newShardSet(set, cfg)
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

// shardSet is one transport.Client per shard plus the telemetry they feed.
type shardSet struct {
	id           component.ID
	logger       *zap.Logger
	clients      []*transport.Client
	queueBytes   int
	flushTimeout time.Duration
	telemetry    *metadata.TelemetryBuilder
	obs          *observer
	health       *health
	storage      *component.ID
	// queue is the persistent queue, when storage is configured; set by
	// the first start, before any batch arrives.
	queue      *persistentQueue
	replayStop chan struct{}
	replayDone chan struct{}
	startErr   error

	users     int // guarded by registry.mu
	startOnce sync.Once
}

func newShardSet(set processor.Settings, cfg *Config) (*shardSet, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("creating telemetry: %w", err)
	}
	hl := newHealth(set.Logger, cfg.Endpoints)
	obs := newObserver(tb, hl, set.ID, len(cfg.Endpoints))
	obs.recordZeros()
	s := &shardSet{
		id:           set.ID,
		logger:       set.Logger,
		queueBytes:   cfg.QueueBytes,
		flushTimeout: cfg.FlushTimeout,
		telemetry:    tb,
		obs:          obs,
		health:       hl,
		storage:      cfg.Storage,
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
	for shard, endpoint := range cfg.Endpoints {
		c, err := transport.NewClient(transport.ClientSettings{
			Endpoint:       endpoint,
			Sender:         sender,
			Shard:          uint32(shard),
			ShardCount:     uint32(len(cfg.Endpoints)),
			QueueBytes:     cfg.QueueBytes,
			DialTimeout:    cfg.DialTimeout,
			InitialBackoff: cfg.InitialBackoff,
			MaxBackoff:     cfg.MaxBackoff,
			WriteTimeout:   cfg.WriteTimeout,
			AckTimeout:     cfg.AckTimeout,
			TLS:            tlsConfig,
			// The client adds its endpoint and shard to every line itself.
			Logger:   slog.New(zapslog.NewHandler(set.Logger.Core())),
			Observer: obs,
		})
		if err != nil {
			tb.Shutdown()
			return nil, fmt.Errorf("endpoints[%d]: %w", shard, err)
		}
		s.clients = append(s.clients, c)
	}
	err = tb.RegisterProcessorSdpshardQueueBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
		for shard, c := range s.clients {
			o.Observe(int64(c.QueuedBytes()), obs.shardAttrs[shard])
		}
		return nil
	})
	if err != nil {
		tb.Shutdown()
		return nil, fmt.Errorf("registering queue_bytes gauge: %w", err)
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
			for _, c := range s.clients {
				c.Start()
			}
			s.replayStop, s.replayDone = make(chan struct{}), make(chan struct{})
			go s.replay(left)
			return
		}
		for _, c := range s.clients {
			c.Start()
		}
	})
	return s.startErr
}

// replay sends again the frames a previous run left stored, waiting for
// room in each shard's queue, until done or the shard set shuts down.
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
	for _, f := range left {
		if f.shard >= len(s.clients) {
			s.logger.Error("A stored frame belongs to a shard that no longer exists; it stays stored",
				zap.Int("shard", f.shard), zap.Int("shards", len(s.clients)), zap.Int("items", f.frame.Items))
			continue
		}
		for {
			err := s.clients[f.shard].Send([]transport.Frame{f.frame}, s.queue.onSettled([]uint64{f.seq}, nil))
			if err == nil {
				break
			}
			if !errors.Is(err, transport.ErrQueueFull) {
				// Closed: the frame stays stored for the next run.
				return
			}
			select {
			case <-s.replayStop:
				return
			case <-time.After(10 * time.Millisecond):
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
	if s.replayStop != nil {
		close(s.replayStop)
		<-s.replayDone
	}
	var wg sync.WaitGroup
	for _, c := range s.clients {
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

// observer turns transport events into the processor's metrics. The
// attribute sets are built once: the callbacks run on the send path.
type observer struct {
	tb         *metadata.TelemetryBuilder
	health     *health
	processor  attribute.KeyValue
	shardAttrs []metric.MeasurementOption
	ackAttrs   [][3]metric.MeasurementOption
}

func newObserver(tb *metadata.TelemetryBuilder, hl *health, id component.ID, shards int) *observer {
	processorAttr := attribute.String("processor", id.String())
	o := &observer{tb: tb, health: hl, processor: processorAttr}
	for shard := range shards {
		shardAttr := attribute.Int("shard", shard)
		o.shardAttrs = append(o.shardAttrs, metric.WithAttributeSet(attribute.NewSet(processorAttr, shardAttr)))
		var acks [3]metric.MeasurementOption
		for status, name := range [3]string{"accepted", "retry", "rejected"} {
			acks[status] = metric.WithAttributeSet(attribute.NewSet(processorAttr, shardAttr, attribute.String("status", name)))
		}
		o.ackAttrs = append(o.ackAttrs, acks)
	}
	return o
}

// recordZeros records 0 on every counter for every shard, status and
// reason, so that each series exists from the start: a dashboard or alert
// sees 0 rather than nothing until the first event, and a count recorded
// just before shutdown is an increase over a value already exported.
func (o *observer) recordZeros() {
	ctx := context.Background()
	for shard, attrs := range o.shardAttrs {
		for _, c := range []metric.Int64Counter{
			o.tb.ProcessorSdpshardFramesSent, o.tb.ProcessorSdpshardBytesSent, o.tb.ProcessorSdpshardItemsSent,
			o.tb.ProcessorSdpshardRetransmissions, o.tb.ProcessorSdpshardReconnects,
			o.tb.ProcessorSdpshardConnectionFailures, o.tb.ProcessorSdpshardUndeliveredItems,
		} {
			c.Add(ctx, 0, attrs)
		}
		for _, status := range o.ackAttrs[shard] {
			o.tb.ProcessorSdpshardAcks.Add(ctx, 0, status)
		}
	}
	for _, reason := range []string{reasonQueueFull, reasonClosed, reasonRejected, reasonUndelivered, reasonCanceled, reasonMalformed, reasonStorage} {
		o.tb.ProcessorSdpshardRefusedBatches.Add(ctx, 0, metric.WithAttributes(o.processor, attribute.String("reason", reason)))
	}
	o.tb.ProcessorSdpshardUnroutableItems.Add(ctx, 0, metric.WithAttributes(o.processor))
}

var _ transport.Observer = (*observer)(nil)

func (o *observer) FramesSent(shard uint32, s transport.Sent) {
	ctx, attrs := context.Background(), o.shardAttrs[shard]
	o.tb.ProcessorSdpshardFramesSent.Add(ctx, int64(s.Frames), attrs)
	o.tb.ProcessorSdpshardBytesSent.Add(ctx, int64(s.Bytes), attrs)
	o.tb.ProcessorSdpshardItemsSent.Add(ctx, int64(s.Items), attrs)
	if s.Retransmissions > 0 {
		o.tb.ProcessorSdpshardRetransmissions.Add(ctx, int64(s.Retransmissions), attrs)
	}
}

func (o *observer) AckReceived(shard uint32, status sdp.AckStatus, frames int) {
	if int(status) >= len(o.ackAttrs[shard]) {
		return
	}
	o.tb.ProcessorSdpshardAcks.Add(context.Background(), int64(frames), o.ackAttrs[shard][status])
}

func (o *observer) Connected(shard uint32, reconnect bool) {
	o.health.connected(shard)
	if reconnect {
		o.tb.ProcessorSdpshardReconnects.Add(context.Background(), 1, o.shardAttrs[shard])
	}
}

func (o *observer) Disconnected(shard uint32, err error) {
	o.tb.ProcessorSdpshardConnectionFailures.Add(context.Background(), 1, o.shardAttrs[shard])
	o.health.disconnected(shard, err)
}

func (o *observer) Undelivered(shard uint32, _, items int) {
	o.tb.ProcessorSdpshardUndeliveredItems.Add(context.Background(), int64(items), o.shardAttrs[shard])
}
