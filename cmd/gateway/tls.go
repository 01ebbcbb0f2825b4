package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/acp-gateway/gateway/internal/connlimit"
)

// checkTLS refuses half a certificate pair: serving plain HTTP when the operator meant TLS would send the
// bearer token in the clear.
func (c *config) checkTLS() error {
	switch {
	case c.tlsCert != "" && c.tlsKey == "":
		return errors.New("--tls-cert is set but --tls-key is not: a certificate needs its private key (set both, or neither to serve plain HTTP)")
	case c.tlsKey != "" && c.tlsCert == "":
		return errors.New("--tls-key is set but --tls-cert is not: a private key needs its certificate (set both, or neither to serve plain HTTP)")
	}
	return nil
}

// scheme is what the gateway's URLs start with: https when it serves TLS.
func (c *config) scheme() string {
	if c.tlsCert != "" {
		return "https"
	}
	return "http"
}

// servedCert is the certificate pair the gateway presents, swapped whole on SIGHUP so handshakes in flight
// and connections already open keep the pair they started with.
type servedCert struct {
	certFile, keyFile string       // Static after construction.
	logger            *slog.Logger // Static after construction.
	cur               atomic.Pointer[tls.Certificate]
}

// newServedCert loads --tls-cert and --tls-key; nil when TLS is not configured.
func newServedCert(cfg *config, logger *slog.Logger) (*servedCert, error) {
	if cfg.tlsCert == "" {
		return nil, nil
	}
	s := &servedCert{certFile: cfg.tlsCert, keyFile: cfg.tlsKey, logger: logger}
	cert, err := loadCertPair(s.certFile, s.keyFile)
	if err != nil {
		return nil, err
	}
	s.cur.Store(cert)
	logCert(logger, "tls certificate loaded", cert)
	return s, nil
}

// loadCertPair reads and checks a PEM certificate chain and its key; every error names the flag and the file.
func loadCertPair(certFile, keyFile string) (*tls.Certificate, error) {
	certPEM, err := readTLSFile("--tls-cert", certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := readTLSFile("--tls-key", keyFile)
	if err != nil {
		return nil, err
	}
	if !hasPEMBlock(certPEM, func(t string) bool { return t == "CERTIFICATE" }) {
		return nil, fmt.Errorf("--tls-cert %s: no PEM CERTIFICATE block in the file", certFile)
	}
	if !hasPEMBlock(keyPEM, func(t string) bool { return strings.HasSuffix(t, "PRIVATE KEY") }) {
		return nil, fmt.Errorf("--tls-key %s: no PEM PRIVATE KEY block in the file", keyFile)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if strings.Contains(err.Error(), "does not match") {
			return nil, fmt.Errorf("--tls-key %s does not match the certificate in --tls-cert %s", keyFile, certFile)
		}
		return nil, fmt.Errorf("--tls-cert %s and --tls-key %s: %v", certFile, keyFile, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("--tls-cert %s: %v", certFile, err)
		}
	}
	return &cert, nil
}

// readTLSFile reads one of the pair, its error saying which flag and which path without repeating the path.
func readTLSFile(flagName, path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s %s: no such file", flagName, path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", flagName, path, err)
	}
	return b, nil
}

func hasPEMBlock(data []byte, want func(blockType string) bool) bool {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return false
		}
		if want(block.Type) {
			return true
		}
	}
}

// logCert says which certificate is served and warns when clients will refuse it as expired.
func logCert(logger *slog.Logger, msg string, cert *tls.Certificate) {
	leaf := cert.Leaf
	logger.Info(msg, "subject", leaf.Subject.String(), "dns", strings.Join(leaf.DNSNames, ","),
		"serial", fmt.Sprintf("%X", leaf.SerialNumber), "notAfter", leaf.NotAfter.UTC().Format(time.RFC3339))
	if time.Now().After(leaf.NotAfter) {
		logger.Warn("tls certificate has expired: clients refuse it until a renewed pair is loaded (SIGHUP)",
			"notAfter", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
}

// reload is what SIGHUP does: a pair that does not load is logged and the previous one stays served.
func (s *servedCert) reload() {
	cert, err := loadCertPair(s.certFile, s.keyFile)
	if err != nil {
		s.logger.Error("tls certificate not reloaded; the previous one stays in force", "err", err)
		return
	}
	s.cur.Store(cert)
	logCert(s.logger, "tls certificate reloaded", cert)
}

// watch reloads the pair on every SIGHUP until the returned stop is called (which waits for the watcher).
func (s *servedCert) watch() (stop func()) { return onSIGHUP(s.reload) }

// serveHTTP serves ln in plain HTTP/1.1, or with TLS where ALPN offers h2 and http/1.1: WebSocket upgrades
// need HTTP/1.1, event streams and /acp Streamable HTTP gain multiplexing on h2.
func serveHTTP(srv *http.Server, ln net.Listener, certs *servedCert) error {
	if certs == nil {
		return srv.Serve(ln)
	}
	srv.TLSConfig = &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return certs.cur.Load(), nil
		},
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	srv.Protocols = &p
	return srv.ServeTLS(ln, "", "") // ServeTLS adds h2 and http/1.1 to the ALPN list
}

// connContext is connlimit.ConnContext seeing through TLS to the accounted connection underneath.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	return connlimit.ConnContext(ctx, c)
}
