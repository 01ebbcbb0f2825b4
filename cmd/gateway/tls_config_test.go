package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestTLSFlagErrors: half a pair, a missing or unreadable file, a file without PEM, and a key of another
// certificate are each refused at start-up with a message naming the flag and the path.
func TestTLSFlagErrors(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	cert, key := ca.writeLeaf(t, dir, 2)
	_, otherKey := ca.writeLeaf(t, t.TempDir(), 3)
	missing := filepath.Join(dir, "missing.pem")
	unreadable := t.TempDir() // a directory: unreadable as a file even for root
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"cert without key", []string{"--tls-cert", cert}, nil,
			"--tls-cert is set but --tls-key is not: a certificate needs its private key (set both, or neither to serve plain HTTP)"},
		{"key without cert", []string{"--tls-key", key}, nil,
			"--tls-key is set but --tls-cert is not: a private key needs its certificate (set both, or neither to serve plain HTTP)"},
		{"key without cert, from the environment", nil, map[string]string{"GATEWAY_TLS_KEY": key},
			"--tls-key is set but --tls-cert is not: a private key needs its certificate (set both, or neither to serve plain HTTP)"},
		{"missing cert", []string{"--tls-cert", missing, "--tls-key", key}, nil,
			"--tls-cert " + missing + ": no such file"},
		{"missing key", []string{"--tls-cert", cert, "--tls-key", missing}, nil,
			"--tls-key " + missing + ": no such file"},
		{"unreadable cert", []string{"--tls-cert", unreadable, "--tls-key", key}, nil,
			"--tls-cert " + unreadable + ": is a directory"},
		{"unreadable key", []string{"--tls-cert", cert, "--tls-key", unreadable}, nil,
			"--tls-key " + unreadable + ": is a directory"},
		{"cert not PEM", []string{"--tls-cert", garbage, "--tls-key", key}, nil,
			"--tls-cert " + garbage + ": no PEM CERTIFICATE block in the file"},
		{"key given as the cert", []string{"--tls-cert", key, "--tls-key", key}, nil,
			"--tls-cert " + key + ": no PEM CERTIFICATE block in the file"},
		{"key not PEM", []string{"--tls-cert", cert, "--tls-key", garbage}, nil,
			"--tls-key " + garbage + ": no PEM PRIVATE KEY block in the file"},
		{"key of another certificate", []string{"--tls-cert", cert, "--tls-key", otherKey}, nil,
			"--tls-key " + otherKey + " does not match the certificate in --tls-cert " + cert},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--addr", "127.0.0.1:0", "--workdir", t.TempDir()}, c.args...)
			// Cancelled: a flag that were not refused would start a gateway that stops at once (err nil).
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := run(ctx, args, func(k string) string { return c.env[k] }, io.Discard, io.Discard)
			if err == nil || err.Error() != c.want {
				t.Errorf("error %v\nwant %q", err, c.want)
			}
		})
	}

}

// TestTLSKeepsTheTokenRule: TLS protects the token on the wire but is no authentication: a non-loopback
// address still needs a token (or --insecure-no-auth), and with one it needs nothing more.
func TestTLSKeepsTheTokenRule(t *testing.T) {
	ca := newTestCA(t)
	cert, key := ca.writeLeaf(t, t.TempDir(), 2)
	noenv := func(string) string { return "" }
	_, err := parseConfig([]string{"--workdir", t.TempDir(), "--addr", "0.0.0.0:8443", "--tls-cert", cert, "--tls-key", key}, noenv, io.Discard)
	want := "refusing to listen on 0.0.0.0:8443 without a token: set GATEWAY_TOKEN (or --token-file, --users, --oidc-issuer, --trusted-user-header), or pass --insecure-no-auth if you really mean to let anyone who can connect run agents"
	if err == nil || err.Error() != want {
		t.Errorf("TLS without a token on 0.0.0.0: error %v\nwant %q", err, want)
	}
	c, err := parseConfig([]string{"--workdir", t.TempDir(), "--addr", "0.0.0.0:8443", "--tls-cert", cert, "--tls-key", key, "--token", testToken}, noenv, io.Discard)
	if err != nil || c.scheme() != "https" {
		t.Errorf("TLS with a token on 0.0.0.0: %v", err)
	}
	c, err = parseConfig([]string{"--workdir", t.TempDir()}, func(k string) string {
		return map[string]string{"GATEWAY_TLS_CERT": cert, "GATEWAY_TLS_KEY": key}[k]
	}, io.Discard)
	if err != nil || c.tlsCert != cert || c.tlsKey != key {
		t.Errorf("pair from the environment: %+v %v", c, err)
	}
}
