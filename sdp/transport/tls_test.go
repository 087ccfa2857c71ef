// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"
)

// testPKI is a CA and certificates it signed, made in memory.
type testPKI struct {
	pool   *x509.CertPool
	server tls.Certificate // for 127.0.0.1
	client tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "sdp test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	p := &testPKI{pool: x509.NewCertPool()}
	p.pool.AddCert(caCert)
	p.server = issue(t, caCert, caKey, 2, x509.ExtKeyUsageServerAuth)
	p.client = issue(t, caCert, caKey, 3, x509.ExtKeyUsageClientAuth)
	return p
}

func issue(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, serial int64, usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "sdp test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// serverTLS requires and verifies client certificates signed by the CA.
func (p *testPKI) serverTLS() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.server}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: p.pool, MinVersion: tls.VersionTLS12}
}

func (p *testPKI) clientTLS(withCert bool) *tls.Config {
	c := &tls.Config{RootCAs: p.pool, MinVersion: tls.VersionTLS12}
	if withCert {
		c.Certificates = []tls.Certificate{p.client}
	}
	return c
}

// tlsServer serves TLS on a fresh tcp endpoint.
func tlsServer(t *testing.T, cfg *tls.Config) (*Server, *recorder, *observedLogs, string) {
	t.Helper()
	l, err := ListenConfig{TLS: cfg}.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logger, logs := observeLogs(slog.LevelDebug)
	rec := newRecorder(nil)
	srv := &Server{Handler: rec, Logger: logger}
	serve(t, srv, l)
	return srv, rec, logs, "tcp://" + l.Addr().String()
}

func TestTLSClientTalksToTLSServerWithClientCertificates(t *testing.T) {
	pki := newTestPKI(t)
	srv, rec, _, endpoint := tlsServer(t, pki.serverTLS())
	s := testSettings(t, endpoint, nil)
	s.TLS = pki.clientTLS(true)
	h := &healthy{t: t, c: startClient(t, s), rec: rec}
	for _, name := range []string{"a", "b", "c"} {
		h.send(name)
	}
	h.check()
	if st := srv.Stats(); st.Accepted != 1 || st.ProtocolErrors != 0 {
		t.Errorf("server stats %+v", st)
	}
}

// expectNothingDelivered sends a frame that must not get through, and
// checks that the client gives up on it at Shutdown.
func expectNothingDelivered(t *testing.T, s ClientSettings, rec *recorder) {
	t.Helper()
	c := startClient(t, s)
	set := newSettledSet(1)
	sendRetrying(t, c, []Frame{testFrame(t, "secret", 10)}, set.callback(t, 0))
	time.Sleep(300 * time.Millisecond)
	if err := shutdownClient(t, c, 100*time.Millisecond); !errors.Is(err, ErrUndelivered) {
		t.Errorf("Shutdown: %v, want ErrUndelivered", err)
	}
	if err := set.wait(t, time.Second)[0]; !errors.Is(err, ErrUndelivered) {
		t.Errorf("frame settled with %v, want ErrUndelivered", err)
	}
	if n := rec.count("secret"); n != 0 {
		t.Errorf("the server handled the frame %d times", n)
	}
}

func TestTLSServerRefusesClientsWithoutAValidCertificate(t *testing.T) {
	pki := newTestPKI(t)
	other := newTestPKI(t)
	srv, rec, logs, endpoint := tlsServer(t, pki.serverTLS())

	s := testSettings(t, endpoint, nil)
	s.TLS = pki.clientTLS(false)
	expectNothingDelivered(t, s, rec)

	// A certificate from another CA is refused too.
	s.TLS = pki.clientTLS(false)
	s.TLS.Certificates = []tls.Certificate{other.client}
	expectNothingDelivered(t, s, rec)

	eventually(t, 5*time.Second, "the refusals to be counted", func() bool { return srv.Stats().ProtocolErrors >= 2 })
	if logs.FilterMessageSnippet("broke the protocol").Len() == 0 {
		t.Error("the refused handshakes were not logged")
	}
}

func TestPlaintextClientToTLSServerFailsCleanly(t *testing.T) {
	pki := newTestPKI(t)
	srv, rec, logs, endpoint := tlsServer(t, pki.serverTLS())
	expectNothingDelivered(t, testSettings(t, endpoint, nil), rec)
	eventually(t, 5*time.Second, "the refusal to be counted", func() bool { return srv.Stats().ProtocolErrors >= 1 })
	found := false
	for _, e := range logs.FilterMessageSnippet("broke the protocol").All() {
		found = found || strings.Contains(e.ContextMap()["error"].(string), "tls")
	}
	if !found {
		t.Error("no log names the TLS failure")
	}
}

func TestTLSClientToPlaintextServerFailsCleanly(t *testing.T) {
	pki := newTestPKI(t)
	rec := newRecorder(nil)
	l, endpoint := listen(t, "tcp")
	serve(t, &Server{Handler: rec}, l)
	s := testSettings(t, endpoint, nil)
	s.TLS = pki.clientTLS(true)
	expectNothingDelivered(t, s, rec)
}
