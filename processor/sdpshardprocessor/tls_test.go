// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"

	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// testCA is a self-signed CA and a server certificate for 127.0.0.1
// issued by it.
type testCA struct {
	caFile string
	server tls.Certificate
}

func newTestCA(t *testing.T) testCA {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "sdp test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "sidecar"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	require.NoError(t, err)

	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600))
	return testCA{caFile: caFile, server: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}}
}

// startTLSSidecar serves endpoint (a tcp:// one from newEndpoints) with TLS.
func startTLSSidecar(t *testing.T, endpoint string, cert tls.Certificate, rec *recorder) {
	t.Helper()
	l, ok := reservedPorts.LoadAndDelete(endpoint)
	require.True(t, ok)
	tl := tls.NewListener(l.(net.Listener), &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	srv := &transport.Server{Handler: rec}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(tl) }()
	t.Cleanup(func() {
		_ = srv.Shutdown(context.Background())
		<-done
	})
}

func TestTLSToTCPSidecar(t *testing.T) {
	ca := newTestCA(t)
	endpoints := newEndpoints(t, "tcp", 1)
	rec := newRecorder()
	startTLSSidecar(t, endpoints[0], ca.server, rec)

	cfg := testConfig(endpoints)
	cfg.TLS = configoptional.Some(configtls.ClientConfig{Config: configtls.Config{CAFile: ca.caFile}})
	require.NoError(t, cfg.Validate())
	sc := signalCases[0]
	p, _ := sc.create(t, NewFactory(), testSettings(nil), cfg)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	_, err := sc.consume(context.Background(), p, 0, 2, 3)
	require.NoError(t, err)
	assert.Len(t, collect(t, sc, []*recorder{rec}).items, 6)
}

func TestTLSRefusesAnUntrustedSidecar(t *testing.T) {
	trusted, other := newTestCA(t), newTestCA(t)
	endpoints := newEndpoints(t, "tcp", 1)
	rec := newRecorder()
	startTLSSidecar(t, endpoints[0], other.server, rec)

	cfg := testConfig(endpoints)
	cfg.TLS = configoptional.Some(configtls.ClientConfig{Config: configtls.Config{CAFile: trusted.caFile}})
	cfg.FlushTimeout = 100 * time.Millisecond // the batch is never delivered
	sc := signalCases[0]
	p, _ := sc.create(t, NewFactory(), testSettings(nil), cfg)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := sc.consume(ctx, p, 0, 2, 3)
	require.ErrorIs(t, err, context.DeadlineExceeded, "no ack can come from a sidecar whose certificate is not trusted")
	assert.Empty(t, rec.snapshot(), "nothing reaches an untrusted sidecar")
}
