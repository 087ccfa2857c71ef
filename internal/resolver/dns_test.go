// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

const fleetName = "consumers.fleet.test."

// dnsConfig is a dns resolver asking server every 20ms.
func dnsConfig(server *fakeDNS, mutate func(*DNSConfig)) Config {
	d := DNSConfig{
		Hostname: fleetName,
		Port:     4319,
		Interval: 20 * time.Millisecond,
		Timeout:  2 * time.Second,
		Server:   server.addr,
	}
	if mutate != nil {
		mutate(&d)
	}
	return Config{DNS: configoptional.Some(d)}
}

// settle waits until the resolver has asked the server again after the
// last change, so that a change it missed would show.
func settle(t *testing.T, server *fakeDNS) {
	t.Helper()
	// Two full rounds of A and AAAA: one may have started before the change.
	server.waitQuestions(t, server.questions()+4)
}

func TestDNSARecordsChangeOverTime(t *testing.T) {
	server := startFakeDNS(t)
	server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.3", fleetName+" 5 IN A 127.0.0.2")
	rec := newRecorder(t)
	rec.start(dnsConfig(server, nil), rec.settings())

	// The first resolution happens within Start.
	select {
	case m := <-rec.updates:
		assert.Equal(t, endpoints("tcp://127.0.0.2:4319", "tcp://127.0.0.3:4319"), m)
	default:
		t.Fatal("Start returned before the first update")
	}

	settle(t, server)
	rec.noUpdate() // same answers, no update

	server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.3", fleetName+" 5 IN A 127.0.0.4", fleetName+" 5 IN A 127.0.0.2")
	assert.Equal(t, endpoints("tcp://127.0.0.2:4319", "tcp://127.0.0.3:4319", "tcp://127.0.0.4:4319"), rec.next())

	server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.4")
	assert.Equal(t, endpoints("tcp://127.0.0.4:4319"), rec.next())

	settle(t, server)
	rec.noUpdate()
}

func TestDNSAAndAAAA(t *testing.T) {
	server := startFakeDNS(t)
	server.set(t, fleetName,
		fleetName+" 5 IN A 127.0.0.2",
		fleetName+" 5 IN AAAA ::1",
		fleetName+" 5 IN AAAA fd00::2",
		fleetName+" 5 IN A 127.0.0.2") // a repeated record is one member
	rec := newRecorder(t)
	rec.start(dnsConfig(server, nil), rec.settings())
	assert.Equal(t, endpoints("tcp://127.0.0.2:4319", "tcp://[::1]:4319", "tcp://[fd00::2]:4319"), rec.next())

	server.set(t, fleetName, fleetName+" 5 IN AAAA ::1")
	assert.Equal(t, endpoints("tcp://[::1]:4319"), rec.next())
}

func TestDNSLargeFleetOverTCP(t *testing.T) {
	// 200 A records do not fit a UDP answer: the resolver asks again over
	// TCP, through the same dialer.
	var records []string
	var want []string
	for i := range 200 {
		addr := fmt.Sprintf("127.0.%d.%d", 1+i/100, 1+i%100)
		records = append(records, fleetName+" 5 IN A "+addr)
		want = append(want, "tcp://"+addr+":4319")
	}
	slices.Sort(want)
	server := startFakeDNS(t)
	server.set(t, fleetName, records...)
	rec := newRecorder(t)
	rec.start(dnsConfig(server, nil), rec.settings())
	assert.Equal(t, endpoints(want...), rec.next())
	assert.Positive(t, server.questionsOverTCP())
}

func TestDNSSRVUsesTargetsAsIDs(t *testing.T) {
	const srv = "_sdp._tcp." + fleetName
	server := startFakeDNS(t)
	server.set(t, srv,
		srv+" 5 IN SRV 0 0 4320 consumer-1.fleet.test.",
		srv+" 5 IN SRV 0 0 4319 Consumer-0.fleet.test.",
		srv+" 5 IN SRV 0 0 4321 consumer-gone.fleet.test.")
	server.set(t, "consumer-0.fleet.test.", "consumer-0.fleet.test. 5 IN A 127.0.0.2")
	server.set(t, "consumer-1.fleet.test.",
		"consumer-1.fleet.test. 5 IN A 127.0.0.4",
		"consumer-1.fleet.test. 5 IN A 127.0.0.3") // dialled on the lowest
	// consumer-gone has no address record (NXDOMAIN): it is left out.
	rec := newRecorder(t)
	rec.start(dnsConfig(server, func(d *DNSConfig) { d.Hostname, d.Port, d.Record = srv, 0, RecordSRV }), rec.settings())
	assert.Equal(t, members(
		"consumer-0.fleet.test", "tcp://127.0.0.2:4319",
		"consumer-1.fleet.test", "tcp://127.0.0.3:4320",
	), rec.next())

	// Re-addressing a target keeps its ID and changes its endpoint.
	server.set(t, "consumer-0.fleet.test.", "consumer-0.fleet.test. 5 IN A 127.0.0.9")
	assert.Equal(t, members(
		"consumer-0.fleet.test", "tcp://127.0.0.9:4319",
		"consumer-1.fleet.test", "tcp://127.0.0.3:4320",
	), rec.next())

	// A new target joins once it has an address.
	server.set(t, "consumer-gone.fleet.test.", "consumer-gone.fleet.test. 5 IN AAAA ::1")
	assert.Equal(t, members(
		"consumer-0.fleet.test", "tcp://127.0.0.9:4319",
		"consumer-1.fleet.test", "tcp://127.0.0.3:4320",
		"consumer-gone.fleet.test", "tcp://[::1]:4321",
	), rec.next())

	server.set(t, srv, srv+" 5 IN SRV 0 0 4320 consumer-1.fleet.test.")
	assert.Equal(t, members("consumer-1.fleet.test", "tcp://127.0.0.3:4320"), rec.next())

	// Targets that all lack an address leave an empty fleet.
	server.set(t, "consumer-1.fleet.test.")
	assert.Empty(t, rec.next())
}

func TestDNSErrorsKeepTheLastList(t *testing.T) {
	for _, tc := range []struct {
		name        string
		breakServer func(*testing.T, *fakeDNS)
	}{
		{"server failure", func(_ *testing.T, s *fakeDNS) { s.fail(dns.RcodeServerFailure, false) }},
		{"refused", func(_ *testing.T, s *fakeDNS) { s.fail(dns.RcodeRefused, false) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := startFakeDNS(t)
			server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.2", fleetName+" 5 IN A 127.0.0.3")
			rec := newRecorder(t)
			rec.start(dnsConfig(server, nil), rec.settings())
			want := endpoints("tcp://127.0.0.2:4319", "tcp://127.0.0.3:4319")
			assert.Equal(t, want, rec.next())
			rec.drainErrors()

			tc.breakServer(t, server)
			err := rec.nextError()
			assert.ErrorContains(t, err, "dns: looking up "+fleetName)
			settle(t, server)
			rec.noUpdate()

			// Back to work: the same list is not announced again, a new one is.
			server.fail(dns.RcodeSuccess, false)
			server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.3")
			assert.Equal(t, endpoints("tcp://127.0.0.3:4319"), rec.next())
		})
	}
}

func TestDNSEmptyAnswerEmptiesTheFleet(t *testing.T) {
	for _, tc := range []struct {
		name  string
		empty func(*testing.T, *fakeDNS)
	}{
		{"name gone", func(t *testing.T, s *fakeDNS) { s.set(t, fleetName) }},
		{"no address", func(t *testing.T, s *fakeDNS) { s.set(t, fleetName, fleetName+" 5 IN TXT nothing") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, keep := range []bool{false, true} {
				server := startFakeDNS(t)
				server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.2")
				rec := newRecorder(t)
				cfg := dnsConfig(server, nil)
				cfg.KeepLastOnEmpty = keep
				res := rec.start(cfg, rec.settings())
				assert.Equal(t, endpoints("tcp://127.0.0.2:4319"), rec.next())
				rec.drainErrors()

				tc.empty(t, server)
				if keep {
					settle(t, server)
					rec.noUpdate()
				} else {
					assert.Empty(t, rec.next(), "an empty answer empties the fleet")
				}
				// An empty answer is an answer, not a failure.
				select {
				case err := <-rec.errs:
					t.Errorf("keep_last_on_empty %v: an empty answer reported %v", keep, err)
				default:
				}

				server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.3")
				assert.Equal(t, endpoints("tcp://127.0.0.3:4319"), rec.next())
				rec.shutdown(res)
			}
		})
	}
}

func TestDNSFailedFamilyKeepsItsLastAnswer(t *testing.T) {
	for _, tc := range []struct {
		failing       uint16
		change, after []string // the working family's new records; the list then
	}{
		{
			failing: dns.TypeAAAA,
			change:  []string{fleetName + " 5 IN A 127.0.0.3", fleetName + " 5 IN AAAA ::2"},
			after:   []string{"tcp://127.0.0.3:4319", "tcp://[::1]:4319"},
		},
		{
			failing: dns.TypeA,
			change:  []string{fleetName + " 5 IN A 127.0.0.3", fleetName + " 5 IN AAAA ::2"},
			after:   []string{"tcp://127.0.0.2:4319", "tcp://[::2]:4319"},
		},
	} {
		t.Run(dns.TypeToString[tc.failing], func(t *testing.T) {
			server := startFakeDNS(t)
			server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.2", fleetName+" 5 IN AAAA ::1")
			rec := newRecorder(t)
			rec.start(dnsConfig(server, nil), rec.settings())
			assert.Equal(t, endpoints("tcp://127.0.0.2:4319", "tcp://[::1]:4319"), rec.next())
			rec.drainErrors()

			// The failing family's members do not leave, and the other
			// family's changes still come through.
			server.failOnly(tc.failing, dns.RcodeServerFailure, false)
			assert.ErrorContains(t, rec.nextError(), "dns: looking up the "+dns.TypeToString[tc.failing]+" records of "+fleetName+", keeping their last answer (1 addresses)")
			settle(t, server)
			rec.noUpdate()
			server.set(t, fleetName, tc.change...)
			assert.Equal(t, endpoints(tc.after...), rec.next())

			// Both failing: a failed resolution, the list stays.
			server.fail(dns.RcodeServerFailure, false)
			rec.drainErrors()
			assert.ErrorContains(t, rec.nextError(), "dns: looking up "+fleetName)
			settle(t, server)
			rec.noUpdate()
		})
	}
}

func TestDNSTimeoutKeepsTheLastList(t *testing.T) {
	server := startFakeDNS(t)
	server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.2")
	rec := newRecorder(t)
	rec.start(dnsConfig(server, func(d *DNSConfig) { d.Timeout = 50 * time.Millisecond }), rec.settings())
	assert.Equal(t, endpoints("tcp://127.0.0.2:4319"), rec.next())
	rec.drainErrors()

	server.fail(dns.RcodeSuccess, true)
	err := rec.nextError()
	var dnsErr *net.DNSError
	require.ErrorAs(t, err, &dnsErr)
	assert.True(t, dnsErr.IsTimeout, "want a timeout, got %v", err)
	settle(t, server)
	rec.noUpdate()

	server.fail(dns.RcodeSuccess, false)
	server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.5")
	assert.Equal(t, endpoints("tcp://127.0.0.5:4319"), rec.next())
}

func TestDNSFirstResolutionFailsThenSucceeds(t *testing.T) {
	server := startFakeDNS(t)
	server.fail(dns.RcodeServerFailure, false)
	rec := newRecorder(t)
	rec.start(dnsConfig(server, nil), rec.settings())
	require.Error(t, rec.nextError())
	rec.noUpdate()

	server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.2")
	server.fail(dns.RcodeSuccess, false)
	assert.Equal(t, endpoints("tcp://127.0.0.2:4319"), rec.next())
}

func TestDNSShutdownStopsAsking(t *testing.T) {
	server := startFakeDNS(t)
	server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.2")
	rec := newRecorder(t)
	res := rec.start(dnsConfig(server, nil), rec.settings())
	assert.Equal(t, endpoints("tcp://127.0.0.2:4319"), rec.next())

	rec.shutdown(res)
	asked := server.questions()
	server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.3")
	time.Sleep(100 * time.Millisecond) // five intervals
	assert.Equal(t, asked, server.questions(), "asked after Shutdown")
	rec.noUpdate()
}

func TestDNSShutdownAbandonsAQueryInFlight(t *testing.T) {
	server := startFakeDNS(t)
	server.set(t, fleetName, fleetName+" 5 IN A 127.0.0.2")
	serving := goleak.IgnoreCurrent()
	rec := newRecorder(t)
	// A timeout far longer than the test: Shutdown must not wait for it.
	res := rec.start(dnsConfig(server, func(d *DNSConfig) { d.Timeout = time.Hour }), rec.settings())
	assert.Equal(t, endpoints("tcp://127.0.0.2:4319"), rec.next())

	server.fail(dns.RcodeSuccess, true)
	server.waitQuestions(t, server.questions()) // a query is waiting for its answer
	// Less than the standard library's own per-query timeout (5s by
	// default), which would otherwise end the query.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	require.NoError(t, res.Shutdown(ctx))
	rec.stopped.Store(true)
	goleak.VerifyNone(t, serving) // no lookup left waiting
	rec.noUpdate()
}

func TestDNSShutdownBeforeStart(t *testing.T) {
	res, err := New(Config{DNS: configoptional.Some(DNSConfig{Hostname: fleetName, Port: 1})}, Settings{})
	require.NoError(t, err)
	assert.NoError(t, res.Shutdown(context.Background()))
}

func TestDNSAddressIdentityIsWarned(t *testing.T) {
	for _, record := range []RecordType{RecordA, RecordSRV} {
		core, logs := observer.New(zap.WarnLevel)
		server := startFakeDNS(t)
		cfg := dnsConfig(server, func(d *DNSConfig) {
			if d.Record = record; record == RecordSRV {
				d.Port = 0
			}
		})
		rec := newRecorder(t)
		set := rec.settings()
		set.Logger = zap.New(core)
		rec.shutdown(rec.start(cfg, set))
		warned := logs.FilterMessageSnippet("identifies members by their addresses").Len()
		if record == RecordA {
			assert.Equal(t, 1, warned, "record a")
		} else {
			assert.Zero(t, warned, "record srv")
		}
	}
}
