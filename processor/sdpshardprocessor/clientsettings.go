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
// and TLS. internal/fleet adds a static list's shard (fleet.ShardSettings)
// or a resolver's member identity (shard 0 of 1, named by its ID).
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
