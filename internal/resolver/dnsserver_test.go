// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// fakeDNS is an in-process DNS server, on UDP and TCP of one loopback port,
// whose answers a test changes while a resolver asks it.
type fakeDNS struct {
	addr string

	mu      sync.Mutex
	records map[string][]dns.RR // by lower-case FQDN
	rcode   int                 // answered instead of the records when not success
	silent  bool                // answer nothing at all, so that queries time out
	only    uint16              // when set, rcode and silent apply to this type only
	asked   int                 // questions received
	overTCP int                 // of which over TCP
}

func startFakeDNS(t *testing.T) *fakeDNS {
	t.Helper()
	s := &fakeDNS{records: make(map[string][]dns.RR)}
	udp, tcp := listenUDPAndTCP(t)
	s.addr = udp.LocalAddr().String()
	servers := []*dns.Server{
		{PacketConn: udp, Handler: s},
		{Listener: tcp, Handler: s},
	}
	var wg sync.WaitGroup
	for _, server := range servers {
		started := make(chan struct{})
		server.NotifyStartedFunc = func() { close(started) }
		wg.Go(func() { _ = server.ActivateAndServe() })
		<-started
	}
	t.Cleanup(func() {
		for _, server := range servers {
			_ = server.Shutdown()
		}
		wg.Wait()
	})
	return s
}

// listenUDPAndTCP listens on one loopback port for both protocols; the
// port the system picks for UDP may be taken for TCP, so it tries a few.
func listenUDPAndTCP(t *testing.T) (net.PacketConn, net.Listener) {
	t.Helper()
	var lastErr error
	for range 20 {
		udp, err := net.ListenPacket("udp", "127.0.0.1:0")
		require.NoError(t, err)
		tcp, err := net.Listen("tcp", udp.LocalAddr().String())
		if err == nil {
			return udp, tcp
		}
		lastErr = err
		_ = udp.Close()
	}
	t.Fatalf("no loopback port free for both UDP and TCP: %v", lastErr)
	return nil, nil
}

// ServeDNS answers from the current records.
func (s *fakeDNS) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	s.mu.Lock()
	s.asked++
	if w.LocalAddr().Network() == "tcp" {
		s.overTCP++
	}
	silent, rcode := s.silent, s.rcode
	var answer []dns.RR
	known := false
	if len(req.Question) == 1 {
		q := req.Question[0]
		if s.only != 0 && q.Qtype != s.only {
			silent, rcode = false, dns.RcodeSuccess
		}
		rrs, ok := s.records[strings.ToLower(q.Name)]
		known = ok
		for _, rr := range rrs {
			if rr.Header().Rrtype == q.Qtype {
				answer = append(answer, dns.Copy(rr))
			}
		}
	}
	s.mu.Unlock()
	if silent {
		return
	}
	resp := new(dns.Msg)
	resp.SetReply(req)
	resp.Authoritative = true
	switch {
	case rcode != dns.RcodeSuccess:
		resp.Rcode = rcode
	case !known:
		resp.Rcode = dns.RcodeNameError
	default:
		resp.Answer = answer
	}
	if w.LocalAddr().Network() == "udp" {
		// As a real server does: what does not fit the client's datagram
		// is cut, with the truncated bit telling it to ask over TCP.
		size := dns.MinMsgSize
		if opt := req.IsEdns0(); opt != nil {
			size = int(opt.UDPSize())
		}
		resp.Truncate(size)
	}
	_ = w.WriteMsg(resp)
}

// set replaces the records of the names they carry; a name given with no
// record is removed (NXDOMAIN).
func (s *fakeDNS) set(t *testing.T, name string, records ...string) {
	t.Helper()
	rrs := make([]dns.RR, 0, len(records))
	for _, text := range records {
		rr, err := dns.NewRR(text)
		require.NoError(t, err)
		rrs = append(rrs, rr)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(rrs) == 0 {
		delete(s.records, strings.ToLower(dns.Fqdn(name)))
		return
	}
	s.records[strings.ToLower(dns.Fqdn(name))] = rrs
}

// fail makes the server answer every question with rcode (dns.RcodeSuccess
// to answer again), or, with silent, not answer at all.
func (s *fakeDNS) fail(rcode int, silent bool) {
	s.failOnly(0, rcode, silent)
}

// failOnly is fail for the questions of one type (0: all).
func (s *fakeDNS) failOnly(qtype uint16, rcode int, silent bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.only, s.rcode, s.silent = qtype, rcode, silent
}

// questionsOverTCP returns how many questions came over TCP.
func (s *fakeDNS) questionsOverTCP() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overTCP
}

// questions returns how many questions the server has received.
func (s *fakeDNS) questions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked
}

// waitQuestions waits until the server has received more than n
// questions in all.
func (s *fakeDNS) waitQuestions(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return s.questions() > n }, waitFor, time.Millisecond)
}
