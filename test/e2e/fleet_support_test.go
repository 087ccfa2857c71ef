// SPDX-License-Identifier: Apache-2.0

//go:build e2e

// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// fleetDNS is an in-process DNS server answering the A records of one name
// with a list of addresses the test changes.
type fleetDNS struct {
	name string // fully qualified, with the final dot
	srv  *dns.Server
	addr string

	mu    sync.Mutex
	addrs []netip.Addr
}

func startFleetDNS(t *testing.T, name string) *fleetDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveFleetDNS(t, name, pc)
}

// serveFleetDNS answers name on pc until the test ends.
func serveFleetDNS(t *testing.T, name string, pc net.PacketConn) *fleetDNS {
	t.Helper()
	d := &fleetDNS{name: dns.Fqdn(name), addr: pc.LocalAddr().String()}
	d.srv = &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(d.answer)}
	started := make(chan struct{})
	d.srv.NotifyStartedFunc = func() { close(started) }
	go d.srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { _ = d.srv.Shutdown() })
	return d
}

func (d *fleetDNS) set(addrs ...netip.Addr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addrs = addrs
}

func (d *fleetDNS) answer(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	d.mu.Lock()
	addrs := d.addrs
	d.mu.Unlock()
	for _, q := range req.Question {
		if q.Name != d.name || q.Qtype != dns.TypeA {
			continue
		}
		for _, a := range addrs {
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 0},
				A:   net.IP(a.AsSlice()),
			})
		}
	}
	_ = w.WriteMsg(m)
}

// fleetCerts writes a CA, a server certificate for the given IPs and a
// client certificate, all signed by the CA, as PEM files in dir.
type fleetCerts struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

func writeFleetCerts(t *testing.T, dir string, ips []netip.Addr) fleetCerts {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fleet test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(serial int64, name string, usage x509.ExtKeyUsage, ips []net.IP) (certPEM, keyPEM []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	}
	var serverIPs []net.IP
	for _, a := range ips {
		serverIPs = append(serverIPs, net.IP(a.AsSlice()))
	}
	serverCert, serverKey := issue(2, "consumer", x509.ExtKeyUsageServerAuth, serverIPs)
	clientCert, clientKey := issue(3, "gateway", x509.ExtKeyUsageClientAuth, nil)
	c := fleetCerts{
		CA: filepath.Join(dir, "ca.pem"), ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem"),
	}
	for path, b := range map[string][]byte{
		c.CA:         pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		c.ServerCert: serverCert, c.ServerKey: serverKey, c.ClientCert: clientCert, c.ClientKey: clientKey,
	} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// spanAt is one span a sidecar wrote: which resource it belongs to and when
// its request was built (the load client stamps every span's start time).
type spanAt struct {
	Service string
	Built   time.Time
	Trace   [16]byte
}

// readSpans reads the traces files a sidecar wrote in mode file, by span
// id.
func readSpans(t *testing.T, dir string) map[spanID]spanAt {
	t.Helper()
	out := map[spanID]spanAt{}
	files, err := filepath.Glob(filepath.Join(dir, "shard-*-traces.otlp"))
	if err != nil {
		t.Fatal(err)
	}
	var unmarshaler ptrace.ProtoUnmarshaler
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+4 <= len(b); {
			n := int(binary.LittleEndian.Uint32(b[off:]))
			if off+4+n > len(b) {
				t.Fatalf("%s: record at offset %d is cut", file, off)
			}
			td, err := unmarshaler.UnmarshalTraces(b[off+4 : off+4+n])
			off += 4 + n
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			for _, rs := range td.ResourceSpans().All() {
				service, _ := rs.Resource().Attributes().Get("service.name")
				for _, ss := range rs.ScopeSpans().All() {
					for _, span := range ss.Spans().All() {
						out[spanID(span.SpanID())] = spanAt{Service: service.Str(), Built: span.StartTimestamp().AsTime(), Trace: span.TraceID()}
					}
				}
			}
		}
	}
	return out
}

// unreceived counts the acknowledged ids (the keys of each map of acked)
// that no consumer received (no map of at holds them).
func unreceived[K comparable, A, V any](acked []map[K]A, at []map[K]V) (total, lost int) {
	for _, a := range acked {
		for id := range a {
			total++
			if !slices.ContainsFunc(at, func(m map[K]V) bool { _, ok := m[id]; return ok }) {
				lost++
			}
		}
	}
	return total, lost
}
