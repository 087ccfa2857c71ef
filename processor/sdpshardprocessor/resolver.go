// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"go.opentelemetry.io/collector/processor"

	"github.com/otelcol-sdp/otelcol-sdp/internal/resolver"
)

// member and memberSource are the resolver's: the fleet takes the members a
// resolver reports as they come.
type (
	member       = resolver.Member
	memberSource = resolver.Resolver
)

// newResolverSource builds the resolver configured in cfg.
func newResolverSource(cfg *Config, set processor.Settings, onError func(error)) (memberSource, error) {
	return resolver.New(*cfg.Resolver.Get(), resolver.Settings{Logger: set.Logger, OnError: onError})
}
