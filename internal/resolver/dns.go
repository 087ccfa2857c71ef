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
	"sync/atomic"
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
	// openConns counts the queries' connections not yet closed.
	openConns atomic.Int64

	// lastAddrs are the last answers of the A (0) and AAAA (1) lookups
	// that succeeded, used while the other family's lookup fails. Owned by
	// resolveOnce's caller.
	lastAddrs [2][]netip.Addr
}

// addressFamilies are the networks of the A and AAAA lookups, with the
// record types they ask for.
var addressFamilies = [2]struct{ network, record string }{{"ip4", "A"}, {"ip6", "AAAA"}}

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
	r := &dnsResolver{
		cfg:    cfg,
		logger: set.Logger,
		errs:   errorLog{logger: set.Logger, onError: set.OnError, now: time.Now},
	}
	// A and AAAA are asked separately (resolveA), so that one failing
	// family keeps its last answer while the other still updates.
	r.lookup = &net.Resolver{StrictErrors: true, PreferGo: cfg.Server != "", Dial: r.dial}
	return r
}

// dial connects the resolver's queries to the configured server, or to the
// system's, and closes each connection when its lookup is abandoned: the
// standard library would otherwise leave the query waiting for its answer
// after Shutdown returned.
func (r *dnsResolver) dial(ctx context.Context, network, address string) (net.Conn, error) {
	if r.cfg.Server != "" {
		address = r.cfg.Server
	}
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	r.openConns.Add(1)
	c := &abandonableConn{Conn: conn, open: &r.openConns}
	// Once the lookup has closed c, the context's end finds it closed.
	context.AfterFunc(ctx, func() { _ = c.Close() })
	if pc, ok := conn.(net.PacketConn); ok {
		// The resolver frames its queries by whether the connection is a
		// PacketConn.
		return abandonablePacketConn{abandonableConn: c, packets: pc}, nil
	}
	return c, nil
}

// abandonablePacketConn is an abandonableConn that keeps the datagram
// methods of a UDP connection.
type abandonablePacketConn struct {
	*abandonableConn
	packets net.PacketConn
}

func (c abandonablePacketConn) ReadFrom(p []byte) (int, net.Addr, error) {
	return c.packets.ReadFrom(p)
}

func (c abandonablePacketConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	return c.packets.WriteTo(p, addr)
}

// abandonableConn is a query's connection, closed by its lookup or when
// the lookup's context ends, whichever comes first.
type abandonableConn struct {
	net.Conn
	open   *atomic.Int64
	closed sync.Once
}

func (c *abandonableConn) Close() error {
	err := net.ErrClosed
	c.closed.Do(func() {
		err = c.Conn.Close()
		c.open.Add(-1)
	})
	return err
}

// Start resolves once, within the timeout, and then every interval.
func (r *dnsResolver) Start(_ context.Context, update func([]Member)) error {
	r.pub.update = update
	if r.cfg.Record == RecordA {
		r.logger.Warn("The dns resolver with record a identifies members by their addresses: a new consumer on a departed one's address takes over its keys and the frames it had not acknowledged. Use record srv, or the k8s resolver with a StatefulSet, for identities that outlive an address.",
			zap.String("hostname", r.cfg.Hostname))
	}
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
	case <-ctx.Done():
		return ctx.Err()
	}
	// Cancelling closed the connections of abandoned queries; wait for the
	// standard library's lookups to notice.
	ticker := time.NewTicker(time.Millisecond)
	defer ticker.Stop()
	for r.openConns.Load() > 0 {
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (r *dnsResolver) resolveOnce(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	var members []Member
	var degraded bool // an answer stood in for a failed lookup
	var err error
	if r.cfg.Record == RecordSRV {
		members, err = r.resolveSRV(ctx)
	} else {
		members, degraded, err = r.resolveA(ctx)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
			return // shutting down
		}
		r.errs.failed(err)
		return
	}
	if !degraded {
		r.errs.succeeded()
	}
	if r.pub.publish(members) {
		r.logger.Debug("DNS members changed", zap.String("hostname", r.cfg.Hostname), zap.String("members", describe(members)))
	}
}

// resolveA lists every A and AAAA address of the hostname as a member. The
// two families are asked separately: when one lookup fails and the other
// answers, the failed family's last answer stands in for it and the error
// is reported, so a broken AAAA server neither stops the list updating nor
// looks like its members leaving. A name or record type that does not exist
// is an answer with no address. degraded reports that a last answer stood
// in for a failed lookup.
func (r *dnsResolver) resolveA(ctx context.Context) (members []Member, degraded bool, err error) {
	var addrs [2][]netip.Addr
	var errs [2]error
	var wg sync.WaitGroup
	for i, family := range addressFamilies {
		wg.Go(func() { addrs[i], errs[i] = r.lookupFamily(ctx, family.network) })
	}
	wg.Wait()
	if errs[0] != nil && errs[1] != nil {
		return nil, false, fmt.Errorf("dns: looking up %s: %w", r.cfg.Hostname, errors.Join(errs[0], errs[1]))
	}
	for i, family := range addressFamilies {
		if errs[i] != nil {
			addrs[i] = r.lastAddrs[i]
			degraded = true
			r.errs.failed(fmt.Errorf("dns: looking up the %s records of %s, keeping their last answer (%d addresses): %w",
				family.record, r.cfg.Hostname, len(addrs[i]), errs[i]))
			continue
		}
		r.lastAddrs[i] = addrs[i]
	}
	port := strconv.Itoa(r.cfg.Port)
	members = make([]Member, 0, len(addrs[0])+len(addrs[1]))
	for _, addr := range slices.Concat(addrs[0], addrs[1]) {
		endpoint := "tcp://" + net.JoinHostPort(addr.Unmap().String(), port)
		members = append(members, Member{ID: endpoint, Endpoint: endpoint})
	}
	return members, degraded, nil
}

// lookupFamily asks for the addresses of one family ("ip4" or "ip6"); a
// name without such records is an empty answer, not an error.
func (r *dnsResolver) lookupFamily(ctx context.Context, network string) ([]netip.Addr, error) {
	addrs, err := r.lookup.LookupNetIP(ctx, network, r.cfg.Hostname)
	if isNotFound(err) {
		return nil, nil
	}
	return addrs, err
}

// isNotFound tells an answer that the name or its records do not exist
// (NXDOMAIN, or no records of the type) from a failure to get an answer.
func isNotFound(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

// resolveSRV lists every target of the hostname's SRV records as a member,
// at its lowest address. A target that does not exist is left out; any
// other failure fails the whole resolution.
func (r *dnsResolver) resolveSRV(ctx context.Context) ([]Member, error) {
	_, records, err := r.lookup.LookupSRV(ctx, "", "", r.cfg.Hostname)
	if isNotFound(err) {
		return nil, nil
	}
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
		if isNotFound(err) {
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
