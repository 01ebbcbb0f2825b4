package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestHealthcheck: `gateway healthcheck` passes against a live gateway at the address GATEWAY_ADDR or
// --addr names (an unspecified host probed on loopback, HTTPS when GATEWAY_TLS_CERT is set), and fails with
// the URL it tried when nothing healthy answers there.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	addr := strings.TrimPrefix(g.base, "http://")
	_, port, _ := net.SplitHostPort(addr)
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	ctx := context.Background()

	if err := healthcheck(ctx, nil, env(map[string]string{"GATEWAY_ADDR": addr}), io.Discard); err != nil {
		t.Errorf("GATEWAY_ADDR=%s: %v", addr, err)
	}
	if err := healthcheck(ctx, []string{"--addr", "0.0.0.0:" + port}, env(nil), io.Discard); err != nil {
		t.Errorf("--addr 0.0.0.0:%s (probed on loopback): %v", port, err)
	}
	// Plain HTTP asked over TLS, and a port nobody serves: both fail and say what they tried.
	err := healthcheck(ctx, nil, env(map[string]string{"GATEWAY_ADDR": addr, "GATEWAY_TLS_CERT": "/x.pem"}), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "https://"+addr+"/healthz") {
		t.Errorf("HTTPS to a plain-HTTP gateway: %v", err)
	}
	free := "127.0.0.1:" + freePort(t)
	err = healthcheck(ctx, []string{"--addr", free}, env(nil), io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "healthcheck: GET http://"+free+"/healthz: ") {
		t.Errorf("nobody listening: %v", err)
	}
	if err := healthcheck(ctx, []string{"extra"}, env(nil), io.Discard); err == nil || err.Error() != `healthcheck: unexpected argument "extra"` {
		t.Errorf("an argument: %v", err)
	}
	// Something that answers, but not 200 {"status":"ok"}, is not healthy.
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"status":"starting"}`, http.StatusServiceUnavailable)
	}))
	defer sick.Close()
	sickAddr := strings.TrimPrefix(sick.URL, "http://")
	err = healthcheck(ctx, []string{"--addr", sickAddr}, env(nil), io.Discard)
	if err == nil || err.Error() != "healthcheck: GET http://"+sickAddr+`/healthz: 503 Service Unavailable, status "starting"` {
		t.Errorf("a 503: %v", err)
	}

	// Over TLS: GATEWAY_TLS_CERT set makes it HTTPS, whatever names the certificate holds.
	ca := newTestCA(t)
	certFile, keyFile := ca.writeLeaf(t, t.TempDir(), 2)
	tg := startTLSGateway(t, certFile, keyFile)
	tlsAddr := strings.TrimPrefix(tg.base, "https://")
	if err := healthcheck(ctx, nil, env(map[string]string{"GATEWAY_ADDR": tlsAddr, "GATEWAY_TLS_CERT": filepath.Base(certFile)}), io.Discard); err != nil {
		t.Errorf("over TLS: %v", err)
	}
}
