package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// testCA is a self-signed certificate authority made for one test; clients trust only it.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gateway test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// writeLeaf writes a leaf for 127.0.0.1 and localhost with the given serial, signed by the CA, as PEM files
// (replacing what is there) and returns their paths.
func (ca *testCA) writeLeaf(t *testing.T, dir string, serial int64) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "gateway test leaf"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeFileAtomic(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writeFileAtomic(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	return certFile, keyFile
}

// writeFileAtomic replaces path by rename, as certificate renewal tools do.
func writeFileAtomic(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// client trusts only the CA and negotiates h2 where the server offers it (WebSocket dials still use HTTP/1.1).
func (ca *testCA) client() *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ca.pool},
		ForceAttemptHTTP2: true,
	}}
}

var listenURLRE = regexp.MustCompile(`msg="gateway listening" addr=\S+ url=(https://[^/ ]+)/`)

// startTLSGateway runs the gateway in process with the pair and extra flags, waits for its https URL in the
// listening line, and stops it at cleanup.
func startTLSGateway(t *testing.T, certFile, keyFile string, args ...string) *gateway {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g := &gateway{t: t, cancel: cancel, done: make(chan error, 1), logs: &syncBuffer{}}
	full := append([]string{"--addr", "127.0.0.1:0", "--demo-delay", "0", "--workdir", t.TempDir(),
		"--tls-cert", certFile, "--tls-key", keyFile}, args...)
	go func() { g.done <- run(ctx, full, func(string) string { return "" }, io.Discard, g.logs) }()
	deadline := time.After(20 * time.Second)
	for g.base == "" {
		if m := listenURLRE.FindStringSubmatch(g.logs.String()); m != nil {
			g.base = m[1]
			break
		}
		select {
		case err := <-g.done:
			t.Fatalf("gateway exited: %v\n%s", err, g.logs.String())
		case <-deadline:
			t.Fatalf("gateway did not log an https URL:\n%s", g.logs.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Cleanup(func() { g.stop() })
	return g
}
