// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"errors"
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"

	"github.com/otelcol-sdp/otelcol-sdp/internal/resolver"
	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// RoutingKey names what a resource's shard is derived from.
type RoutingKey string

const (
	// RoutingKeyResource routes by the identity hash of all resource attributes.
	RoutingKeyResource RoutingKey = "resource"
	// RoutingKeyAttributes routes by the hash of the attributes listed in Config.Attributes.
	RoutingKeyAttributes RoutingKey = "attributes"
	// RoutingKeyTraceID routes each span and log record by its trace id, so
	// that every item of a trace reaches one member; a resource whose items
	// belong to several members is sent to each with only its items. Items
	// without a trace id, and metrics, go by resource.
	RoutingKeyTraceID RoutingKey = "traceID"
	// RoutingKeyService routes by the resource's service.name, so that every
	// item of a service reaches one member (what spanmetrics needs); the
	// shorthand for attributes [service.name]. Resources without it go
	// together, as with attributes.
	RoutingKeyService RoutingKey = "service"
	// RoutingKeyMetric routes each metric, with all its data points, by its
	// name, so that every point of a metric reaches one member; spans and
	// log records go by resource.
	RoutingKeyMetric RoutingKey = "metric"
	// RoutingKeyStreamID routes each metric data point by its stream
	// (resource, scope, metric name and point attributes), so that every
	// point of a series reaches one member; spans and log records go by
	// resource.
	RoutingKeyStreamID RoutingKey = "streamID"
)

// Mode says what the processor passes to the next consumer.
type Mode string

const (
	// ModeTee forwards every resource and passes the batch on unchanged.
	ModeTee Mode = "tee"
	// ModeDivert forwards every resource and passes on only what could not
	// be forwarded; a fully forwarded batch is not passed on at all.
	ModeDivert Mode = "divert"
)

const (
	// MinFrameBytes is the smallest accepted max_frame_bytes: below it the
	// resource and scope envelope alone would not leave room for an item.
	MinFrameBytes = 1024
	// MaxFrameBytes is the largest accepted max_frame_bytes: SDP decoders
	// reject a ResourceFrame whose otlp array is longer.
	MaxFrameBytes = sdp.MaxArrayLen

	defaultQueueBytes     = transport.DefaultQueueBytes
	defaultDialTimeout    = transport.DefaultDialTimeout
	defaultInitialBackoff = transport.DefaultInitialBackoff
	defaultMaxBackoff     = transport.DefaultMaxBackoff
	defaultFlushTimeout   = 10 * time.Second

	// defaultHashVersion is the routing hash of configurations that do not
	// set hash_version: HashV2, the faster of the two.
	defaultHashVersion = int(otlpwire.HashV2)
)

// Config configures the sdpshard processor.
type Config struct {
	// Endpoints lists one sidecar per shard, as unix:///path/to.sock or
	// tcp://host:port; the number of shards is len(Endpoints). Changing the
	// list moves resources between shards (about 1/(N+1) of them when one
	// endpoint is appended). It is the shorthand for a fixed fleet; exactly
	// one of Endpoints and Resolver is set.
	Endpoints []string `mapstructure:"endpoints"`
	// Resolver finds the members of a fleet that changes (static, dns or
	// k8s). Members are ordered by a stable ID and resources assigned by
	// rendezvous hashing over the IDs, so one member joining or leaving
	// moves about 1/N of the resources; frames held for a member that
	// leaves are sent to the resources' new owners.
	Resolver configoptional.Optional[resolver.Config] `mapstructure:"resolver"`
	// RoutingKey is "resource" (default), "attributes", "service",
	// "traceID", "metric" or "streamID".
	RoutingKey RoutingKey `mapstructure:"routing_key"`
	// Attributes are the resource attribute keys hashed when RoutingKey is
	// "attributes"; a resource that has none of them goes to shard 0.
	Attributes []string `mapstructure:"attributes"`
	// HashVersion selects the routing hash (otlpwire.HashVersion): 1 or 2
	// (default). It decides the shard of every resource and is the hash in
	// each frame's resource_hash, so every replica that feeds the same
	// sidecars must use the same version; changing it moves resources
	// between shards once. A version's values never change across releases.
	HashVersion int `mapstructure:"hash_version"`
	// Mode is "tee" (default) or "divert".
	Mode Mode `mapstructure:"mode"`
	// ProfilesDictionary is what each profiles frame carries of its
	// request's dictionary: "whole" (default) or "pruned".
	ProfilesDictionary ProfilesDictionary `mapstructure:"profiles_dictionary"`
	// MaxFrameBytes bounds the OTLP payload of one frame; larger resources
	// are split by scope, then by items, into several frames.
	MaxFrameBytes int `mapstructure:"max_frame_bytes"`
	// QueueBytes bounds, per shard, the bytes of frames held until the
	// sidecar acknowledges them. When a batch does not fit, the processor
	// returns a retryable error.
	QueueBytes int `mapstructure:"queue_bytes"`
	// WaitForAck (default true) makes the processor return only once the
	// sidecars have acknowledged every frame of the batch, so that a client
	// told OK never loses data to a Collector stop. Concurrent batches are
	// pipelined on each connection: a batch waits for its own frames' acks
	// only. False answers OK once the frames are queued in memory: faster
	// for a client that sends one request at a time, but what is queued is
	// lost when the Collector stops before the sidecar acknowledges it.
	WaitForAck bool `mapstructure:"wait_for_ack"`
	// Sender is the identity sent in each connection's Hello. Empty means
	// the Collector's service.instance.id, else the host name.
	Sender string `mapstructure:"sender"`
	// DialTimeout bounds one connection attempt.
	DialTimeout time.Duration `mapstructure:"dial_timeout"`
	// InitialBackoff and MaxBackoff bound the exponential wait between
	// connection attempts.
	InitialBackoff time.Duration `mapstructure:"initial_backoff"`
	// MaxBackoff is the longest wait between connection attempts.
	MaxBackoff time.Duration `mapstructure:"max_backoff"`
	// WriteTimeout bounds one write to a sidecar; a sidecar that stops
	// reading for longer loses its connection, and the frames are sent
	// again on the next one.
	WriteTimeout time.Duration `mapstructure:"write_timeout"`
	// AckTimeout recycles a connection on which frames are in flight but no
	// ack has arrived for this long.
	AckTimeout time.Duration `mapstructure:"ack_timeout"`
	// FlushTimeout bounds how long Shutdown waits for held frames to be
	// acknowledged when the shutdown context has no earlier deadline.
	FlushTimeout time.Duration `mapstructure:"flush_timeout"`
	// SendLinger is how long a member's frames may wait to be written
	// together with the frames of later batches: a member's writer holds
	// them until they add up to SendBatchBytes or the oldest has waited
	// this long, so that the member wakes once per batch of frames rather
	// than once per request. Unset means defaultSendLingerNoAck with
	// wait_for_ack: false (nothing waits for the write) and 0 with
	// wait_for_ack: true, where a request would wait out the linger;
	// 0 turns it off. Shutdown does not wait for it.
	SendLinger *time.Duration `mapstructure:"send_linger"`
	// SendBatchBytes, with a linger, is the size at which a member's held
	// frames are written without waiting for the rest of it. Zero means
	// 1 MiB; it is capped at half of queue_bytes.
	SendBatchBytes int `mapstructure:"send_batch_bytes"`
	// Storage names a storage extension (for example file_storage) that
	// holds every frame from before the processor answers until its
	// sidecar acknowledges it. Frames left when the Collector stops, or is
	// killed, are sent again when it starts. With wait_for_ack: false the
	// client is answered once the frames are written to storage rather
	// than once they are acknowledged. Empty means no persistent queue.
	Storage *component.ID `mapstructure:"storage"`
	// TLS, when present, secures the connections to tcp:// endpoints with
	// the Collector's usual client TLS settings (ca_file, cert_file,
	// key_file, server_name_override, insecure_skip_verify, min_version,
	// ...). Absent means plain TCP. It cannot be combined with unix://
	// endpoints, which are protected by the socket file's permissions.
	TLS configoptional.Optional[configtls.ClientConfig] `mapstructure:"tls"`
	// Ejection, when enabled, takes a member that stops answering out of
	// the assignment until it answers again, so that one stalled consumer
	// does not stall every batch that has a resource for it. Disabled
	// unless the block is present (and not `enabled: false`).
	Ejection configoptional.Optional[EjectionConfig] `mapstructure:"ejection"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// EjectionConfig configures the ejection of members that stop answering,
// for an endpoints list and every resolver alike.
type EjectionConfig struct {
	// StallTimeout is how long a member may hold frames without answering
	// any (no Ack, whatever its status, or no connection at all) before it
	// is ejected: its held frames are taken back and sent to the next
	// owners of their resources, and its resources go to those owners
	// until it is taken back in. A sidecar that answers "retry later" is
	// pushing back, not stalled, and is never ejected.
	StallTimeout time.Duration `mapstructure:"stall_timeout"`
	// ProbeInterval is the longest wait between attempts to reach an
	// ejected member. Each attempt sends a probe: a frame with no items,
	// which a sidecar acknowledges without passing on. The member is taken
	// back in as soon as it answers one.
	ProbeInterval time.Duration `mapstructure:"probe_interval"`
	// MaxEjectedPercent bounds the members ejected at once, as a share of
	// the fleet rounded down; at least one member always stays in. When
	// more stall than that, the rest stay in and their batches are refused
	// (retryably) once their queues fill: a fleet-wide slowdown is
	// backpressure, not a storm of ejections.
	MaxEjectedPercent int `mapstructure:"max_ejected_percent"`

	// prevent unkeyed literal initialization
	_ struct{}
}

const (
	defaultStallTimeout      = 5 * time.Second
	defaultProbeInterval     = time.Second
	defaultMaxEjectedPercent = 50
)

// validate checks an enabled ejection block; errors name the field.
func (e *EjectionConfig) validate() []error {
	var errs []error
	if e.StallTimeout <= 0 {
		errs = append(errs, fmt.Errorf("ejection::stall_timeout: must be positive, got %s", e.StallTimeout))
	}
	if e.ProbeInterval <= 0 {
		errs = append(errs, fmt.Errorf("ejection::probe_interval: must be positive, got %s", e.ProbeInterval))
	}
	if e.MaxEjectedPercent < 1 || e.MaxEjectedPercent > 100 {
		errs = append(errs, fmt.Errorf("ejection::max_ejected_percent: %d is outside [1, 100]", e.MaxEjectedPercent))
	}
	return errs
}

func createDefaultConfig() *Config {
	return &Config{
		RoutingKey:         RoutingKeyResource,
		HashVersion:        defaultHashVersion,
		Mode:               ModeTee,
		WaitForAck:         true,
		ProfilesDictionary: ProfilesDictionaryWhole,
		MaxFrameBytes:      MaxFrameBytes,
		QueueBytes:         defaultQueueBytes,
		DialTimeout:        defaultDialTimeout,
		InitialBackoff:     defaultInitialBackoff,
		MaxBackoff:         defaultMaxBackoff,
		WriteTimeout:       transport.DefaultWriteTimeout,
		AckTimeout:         transport.DefaultAckTimeout,
		FlushTimeout:       defaultFlushTimeout,
		Ejection: configoptional.Default(EjectionConfig{
			StallTimeout:      defaultStallTimeout,
			ProbeInterval:     defaultProbeInterval,
			MaxEjectedPercent: defaultMaxEjectedPercent,
		}),
	}
}

// Validate checks the configuration; every error names the offending field.
func (cfg *Config) Validate() error {
	var errs []error
	switch {
	case cfg.Resolver.HasValue():
		if len(cfg.Endpoints) > 0 {
			errs = append(errs, errors.New("endpoints: not allowed with resolver; list a fixed fleet in one of them only (resolver::static::endpoints or endpoints)"))
		}
		// confmap.Validate validates the resolver block itself, naming it.
	case len(cfg.Endpoints) == 0:
		errs = append(errs, errors.New("endpoints: at least one endpoint (one per shard) is required, or a resolver"))
	}
	seen := make(map[string]int, len(cfg.Endpoints))
	for i, endpoint := range cfg.Endpoints {
		if _, _, err := transport.ParseEndpoint(endpoint); err != nil {
			errs = append(errs, fmt.Errorf("endpoints[%d]: %w", i, err))
		}
		if first, dup := seen[endpoint]; dup {
			errs = append(errs, fmt.Errorf("endpoints[%d]: %q is already shard %d; each shard needs its own sidecar", i, endpoint, first))
		} else {
			seen[endpoint] = i
		}
	}
	switch cfg.RoutingKey {
	case RoutingKeyResource, RoutingKeyTraceID, RoutingKeyService, RoutingKeyMetric, RoutingKeyStreamID:
		if len(cfg.Attributes) > 0 {
			errs = append(errs, errors.New(`attributes: only used with routing_key "attributes"`))
		}
	case RoutingKeyAttributes:
		if len(cfg.Attributes) == 0 {
			errs = append(errs, errors.New(`attributes: at least one key is required with routing_key "attributes"`))
		}
		for i, key := range cfg.Attributes {
			if key == "" {
				errs = append(errs, fmt.Errorf("attributes[%d]: empty key", i))
			}
		}
	default:
		errs = append(errs, fmt.Errorf(`routing_key: unknown value %q, want "resource", "attributes", "service", "traceID", "metric" or "streamID"`, cfg.RoutingKey))
	}
	switch cfg.HashVersion {
	case int(otlpwire.HashV1), int(otlpwire.HashV2):
	default:
		errs = append(errs, fmt.Errorf("hash_version: unknown routing hash version %d, want 1 or 2", cfg.HashVersion))
	}
	switch cfg.Mode {
	case ModeTee, ModeDivert:
	default:
		errs = append(errs, fmt.Errorf(`mode: unknown value %q, want "tee" or "divert"`, cfg.Mode))
	}
	if cfg.MaxFrameBytes < MinFrameBytes || cfg.MaxFrameBytes > MaxFrameBytes {
		errs = append(errs, fmt.Errorf("max_frame_bytes: %d is outside [%d, %d] (SDP allows at most %d OTLP bytes in one frame)",
			cfg.MaxFrameBytes, MinFrameBytes, MaxFrameBytes, MaxFrameBytes))
	}
	if minQueue := maxEncodedFrame(cfg.MaxFrameBytes); cfg.QueueBytes < minQueue {
		errs = append(errs, fmt.Errorf("queue_bytes: %d cannot hold one frame of max_frame_bytes; want at least %d", cfg.QueueBytes, minQueue))
	}
	for _, d := range []struct {
		field string
		value time.Duration
	}{
		{"dial_timeout", cfg.DialTimeout},
		{"initial_backoff", cfg.InitialBackoff},
		{"max_backoff", cfg.MaxBackoff},
		{"write_timeout", cfg.WriteTimeout},
		{"ack_timeout", cfg.AckTimeout},
		{"flush_timeout", cfg.FlushTimeout},
	} {
		if d.value <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be positive, got %s", d.field, d.value))
		}
	}
	if cfg.TLS.HasValue() {
		for i, endpoint := range cfg.Endpoints {
			if network, _, err := transport.ParseEndpoint(endpoint); err == nil && network != "tcp" {
				errs = append(errs, fmt.Errorf("tls: applies to tcp:// endpoints only, and endpoints[%d] is %q", i, endpoint))
			}
		}
		if static := cfg.Resolver.Get(); static != nil && static.Static.HasValue() {
			for i, endpoint := range static.Static.Get().Endpoints {
				if network, _, err := transport.ParseEndpoint(endpoint); err == nil && network != "tcp" {
					errs = append(errs, fmt.Errorf("tls: applies to tcp:// endpoints only, and resolver::static::endpoints[%d] is %q", i, endpoint))
				}
			}
		}
	}
	if e := cfg.Ejection.Get(); e != nil {
		errs = append(errs, e.validate()...)
	}
	errs = append(errs, cfg.validateSend()...)
	errs = append(errs, cfg.ProfilesDictionary.validate()...)
	if cfg.InitialBackoff > 0 && cfg.MaxBackoff > 0 && cfg.MaxBackoff < cfg.InitialBackoff {
		errs = append(errs, fmt.Errorf("max_backoff: %s is shorter than initial_backoff %s", cfg.MaxBackoff, cfg.InitialBackoff))
	}
	return errors.Join(errs...)
}

// routerSettings is the configuration of the shard router.
func (cfg *Config) routerSettings() shard.RouterSettings {
	var attributes []string
	switch cfg.RoutingKey {
	case RoutingKeyAttributes:
		attributes = cfg.Attributes
	case RoutingKeyService:
		attributes = []string{"service.name"}
	}
	// A value that does not fit HashVersion stays invalid (0) rather than
	// wrapping into a defined version, so that NewRouter refuses it even when
	// Validate was not called.
	var version otlpwire.HashVersion
	if cfg.HashVersion > 0 && cfg.HashVersion <= math.MaxUint8 {
		version = otlpwire.HashVersion(cfg.HashVersion)
	}
	return shard.RouterSettings{
		// With a resolver the fleet's snapshot decides the members; the
		// router's own shard count is not used.
		Shards:            max(len(cfg.Endpoints), 1),
		Attributes:        attributes,
		MaxFrameBytes:     cfg.MaxFrameBytes,
		HashVersion:       version,
		ByTraceID:         cfg.RoutingKey == RoutingKeyTraceID,
		ByMetricName:      cfg.RoutingKey == RoutingKeyMetric,
		ByStream:          cfg.RoutingKey == RoutingKeyStreamID,
		PruneDictionaries: cfg.ProfilesDictionary == ProfilesDictionaryPruned,
	}
}

// hasResolver says the members come from a resolver, not an endpoints
// list.
func (cfg *Config) hasResolver() bool { return cfg.Resolver.HasValue() }

// frameOverhead is the most an encoded ResourceFrame adds around its OTLP
// payload: the SDP header, sequence, signal, shard, resource hash, item
// count and the otlp array's length prefix.
const frameOverhead = sdp.HeaderSize + 8 + 1 + 4 + 8 + 4 + 4

func maxEncodedFrame(maxFrameBytes int) int { return maxFrameBytes + frameOverhead }
