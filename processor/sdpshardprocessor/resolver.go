// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"

	"go.opentelemetry.io/collector/processor"

	"github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor/internal/resolver"
)

// resolverSource adapts a resolver.Resolver to the memberSource the fleet
// manager reads.
type resolverSource struct {
	r resolver.Resolver
}

// newResolverSource builds the resolver configured in cfg.
func newResolverSource(cfg *Config, set processor.Settings, onError func(error)) (memberSource, error) {
	r, err := resolver.New(*cfg.Resolver.Get(), resolver.Settings{Logger: set.Logger, OnError: onError})
	if err != nil {
		return nil, err
	}
	return resolverSource{r: r}, nil
}

func (s resolverSource) Start(ctx context.Context, update func([]member)) error {
	return s.r.Start(ctx, func(ms []resolver.Member) {
		members := make([]member, len(ms))
		for i, m := range ms {
			members[i] = member{ID: m.ID, Endpoint: m.Endpoint}
		}
		update(members)
	})
}

func (s resolverSource) Shutdown(ctx context.Context) error { return s.r.Shutdown(ctx) }
