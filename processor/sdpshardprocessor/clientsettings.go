// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"crypto/tls"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// newClientSettings returns the settings every client of the processor is
// built from, for an endpoint: the configuration's queue, timeouts, linger
// and TLS. shardSettings and memberSettings add what tells the clients of
// an endpoints list and of a resolver's fleet apart.
func newClientSettings(cfg *Config, sender string, tlsConfig *tls.Config, releaseFrame func([]byte), logger *zap.Logger) func(endpoint string) transport.ClientSettings {
	return func(endpoint string) transport.ClientSettings {
		return transport.ClientSettings{
			ReleaseFrame:   releaseFrame,
			Endpoint:       endpoint,
			Sender:         sender,
			QueueBytes:     cfg.QueueBytes,
			DialTimeout:    cfg.DialTimeout,
			InitialBackoff: cfg.InitialBackoff,
			MaxBackoff:     cfg.MaxBackoff,
			WriteTimeout:   cfg.WriteTimeout,
			AckTimeout:     cfg.AckTimeout,
			Linger:         cfg.sendLinger(),
			BatchBytes:     cfg.SendBatchBytes,
			TLS:            tlsConfig,
			// The client adds its endpoint and shard to every line itself.
			Logger: slog.New(zapslog.NewHandler(logger.Core())),
		}
	}
}

// shardSettings are the client settings of shard i of an endpoints list of
// n.
func (s *shardSet) shardSettings(endpoint string, i, n int, obs transport.Observer) transport.ClientSettings {
	cs := s.clientSettings(endpoint)
	cs.Shard, cs.ShardCount = uint32(i), uint32(n)
	cs.Observer = obs
	return cs
}

// memberSettings are the client settings of a resolver's member. A
// member's index changes with the fleet, so its connection is shard 0 of 1
// and the member is known by its ID; the client stamps shard 0 on every
// frame it sends.
func (s *shardSet) memberSettings(endpoint, id string, obs transport.Observer) transport.ClientSettings {
	cs := s.clientSettings(endpoint)
	cs.Shard, cs.ShardCount = 0, 1
	cs.Logger = cs.Logger.With(slog.String("member", id))
	cs.Observer = obs
	return cs
}
