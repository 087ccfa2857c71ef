// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"
)

// Member is one consumer of the fleet.
type Member struct {
	// ID is the member's stable identity, used to order members and to
	// assign resources: a StatefulSet pod's hostname (e.g. "consumer-2"), an
	// SRV target, or, for plain A/AAAA records and static endpoints, the
	// endpoint itself.
	ID string
	// Endpoint is the transport endpoint to dial, "tcp://host:port" or
	// "unix:///path".
	Endpoint string
}

// Resolver reports the fleet's members. Start begins resolving and calls
// update with the complete member list, sorted by ID, each time it changes
// (and once after the first resolution). update is never called
// concurrently and never after Shutdown returns.
//
// Start makes the first resolution before it returns, bounded by the
// resolver's timeout, so update is usually first called from within Start
// (from Start's goroutine: update must not wait for Start to return). A
// first resolution that fails or is slow is retried in the background, and
// update is first called once one succeeds. Start fails only when the
// resolver cannot be set up at all.
//
// A failed resolution never changes the fleet: the last good list stays in
// force and the error goes to Settings.OnError. An answer that lists no
// member is not a failure: it empties the fleet, unless
// Config.KeepLastOnEmpty is set.
type Resolver interface {
	Start(ctx context.Context, update func([]Member)) error
	Shutdown(ctx context.Context) error
}

// Settings are what a resolver needs from the component that runs it.
type Settings struct {
	// Logger receives resolution errors (rate-limited) and recoveries. Nil
	// means no logging.
	Logger *zap.Logger
	// OnError, when set, is called with every failed resolution, for
	// example to count resolver errors. It is never called concurrently,
	// may be called from Start, and must not block.
	OnError func(error)
	// K8sClient, when set, is what the k8s resolver reads EndpointSlices
	// with, instead of a client built from the in-cluster configuration:
	// for tests, client-go's object tracker (k8s.io/client-go/testing), the
	// store of its fake clientset. When it implements
	// IsWatchListSemanticsUnSupported() bool, client-go's informer asks it.
	K8sClient EndpointSliceSource
}

// ErrNoResolver is returned by New and Config.Validate when none of
// static, dns and k8s is configured.
var ErrNoResolver = errors.New("one of static, dns or k8s must be set")

// New validates cfg and builds the configured resolver. The k8s resolver
// builds its client here, from the in-cluster configuration unless
// Settings.K8sClient is set, so New fails outside a cluster.
func New(cfg Config, set Settings) (Resolver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if set.Logger == nil {
		set.Logger = zap.NewNop()
	}
	switch {
	case cfg.Static.HasValue():
		return newStatic(*cfg.Static.Get()), nil
	case cfg.DNS.HasValue():
		r := newDNS(*cfg.DNS.Get(), set)
		r.pub.keepLastOnEmpty, r.pub.logger = cfg.KeepLastOnEmpty, set.Logger
		return r, nil
	case cfg.K8s.HasValue():
		r, err := newK8s(*cfg.K8s.Get(), set)
		if err != nil {
			return nil, err
		}
		r.pub.keepLastOnEmpty, r.pub.logger = cfg.KeepLastOnEmpty, set.Logger
		return r, nil
	}
	return nil, ErrNoResolver
}

// normalize sorts members by ID and removes repeated IDs, keeping for each
// ID the member whose endpoint sorts first, so that every replica that sees
// the same records picks the same endpoint.
func normalize(members []Member) []Member {
	slices.SortFunc(members, func(a, b Member) int {
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return strings.Compare(a.Endpoint, b.Endpoint)
	})
	return slices.CompactFunc(members, func(a, b Member) bool { return a.ID == b.ID })
}

// describe renders a member list for logs.
func describe(members []Member) string {
	var b strings.Builder
	for i, m := range members {
		if i > 0 {
			b.WriteString(", ")
		}
		if m.ID == m.Endpoint {
			b.WriteString(m.ID)
		} else {
			fmt.Fprintf(&b, "%s=%s", m.ID, m.Endpoint)
		}
	}
	return b.String()
}
