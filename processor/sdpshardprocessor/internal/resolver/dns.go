// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// srvLookupParallelism bounds the address lookups of SRV targets in flight.
const srvLookupParallelism = 8

// dnsResolver asks a DNS server every interval.
type dnsResolver struct {
	cfg    DNSConfig
	lookup *net.Resolver
	logger *zap.Logger
	errs   errorLog
	pub    publisher

	cancel context.CancelFunc
	done   chan struct{}
}

func newDNS(cfg DNSConfig, set Settings) *dnsResolver {
	if cfg.Record == "" {
		cfg.Record = RecordA
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultDNSInterval
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultDNSTimeout
	}
	// StrictErrors makes a failed AAAA query fail the lookup instead of
	// answering with the A records alone, which would look like a change.
	lookup := &net.Resolver{StrictErrors: true}
	if cfg.Server != "" {
		server := cfg.Server
		var dialer net.Dialer
		lookup.PreferGo = true
		lookup.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, server)
		}
	}
	return &dnsResolver{
		cfg:    cfg,
		lookup: lookup,
		logger: set.Logger,
		errs:   errorLog{logger: set.Logger, onError: set.OnError, now: time.Now},
	}
}

// Start resolves once, within the timeout, and then every interval.
func (r *dnsResolver) Start(_ context.Context, update func([]Member)) error {
	r.pub.update = update
	// The loop outlives Start's context, which only bounds starting.
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done = make(chan struct{})
	r.resolveOnce(ctx)
	go r.run(ctx)
	return nil
}

func (r *dnsResolver) run(ctx context.Context) {
	defer close(r.done)
	ticker := time.NewTicker(r.cfg.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			r.resolveOnce(ctx)
		}
	}
}

// Shutdown stops resolving; once it returns, update is not called again.
func (r *dnsResolver) Shutdown(ctx context.Context) error {
	if r.cancel == nil {
		return nil
	}
	r.cancel()
	r.pub.close()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *dnsResolver) resolveOnce(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	var members []Member
	var err error
	if r.cfg.Record == RecordSRV {
		members, err = r.resolveSRV(ctx)
	} else {
		members, err = r.resolveA(ctx)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
			return // shutting down
		}
		r.errs.failed(err)
		return
	}
	r.errs.succeeded()
	if r.pub.publish(members) {
		r.logger.Debug("DNS members changed", zap.String("hostname", r.cfg.Hostname), zap.String("members", describe(members)))
	}
}

// resolveA lists every A and AAAA address of the hostname as a member.
func (r *dnsResolver) resolveA(ctx context.Context) ([]Member, error) {
	addrs, err := r.lookup.LookupNetIP(ctx, "ip", r.cfg.Hostname)
	if err != nil {
		return nil, fmt.Errorf("dns: looking up %s: %w", r.cfg.Hostname, err)
	}
	port := strconv.Itoa(r.cfg.Port)
	members := make([]Member, 0, len(addrs))
	for _, addr := range addrs {
		endpoint := "tcp://" + net.JoinHostPort(addr.Unmap().String(), port)
		members = append(members, Member{ID: endpoint, Endpoint: endpoint})
	}
	return members, nil
}

// resolveSRV lists every target of the hostname's SRV records as a member,
// at its lowest address. A target that does not exist is left out; any
// other failure fails the whole resolution.
func (r *dnsResolver) resolveSRV(ctx context.Context) ([]Member, error) {
	_, records, err := r.lookup.LookupSRV(ctx, "", "", r.cfg.Hostname)
	if err != nil {
		return nil, fmt.Errorf("dns: looking up SRV %s: %w", r.cfg.Hostname, err)
	}
	members := make([]Member, len(records))
	errs := make([]error, len(records))
	sem := make(chan struct{}, srvLookupParallelism)
	var wg sync.WaitGroup
	for i, record := range records {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			members[i], errs[i] = r.resolveTarget(ctx, record.Target, record.Port)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(members, func(m Member) bool { return m.ID == "" }), nil
}

// resolveTarget finds the address of one SRV target; a target that does
// not exist yields the zero Member.
func (r *dnsResolver) resolveTarget(ctx context.Context, target string, port uint16) (Member, error) {
	addrs, err := r.lookup.LookupNetIP(ctx, "ip", target)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			r.logger.Debug("SRV target has no address; leaving it out", zap.String("target", target))
			return Member{}, nil
		}
		return Member{}, fmt.Errorf("dns: looking up SRV target %s: %w", target, err)
	}
	if len(addrs) == 0 {
		return Member{}, nil
	}
	lowest := slices.MinFunc(addrs, netip.Addr.Compare).Unmap()
	return Member{
		ID:       strings.ToLower(strings.TrimSuffix(target, ".")),
		Endpoint: "tcp://" + net.JoinHostPort(lowest.String(), strconv.Itoa(int(port))),
	}, nil
}
