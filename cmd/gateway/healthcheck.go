package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"time"
)

// healthcheckTimeout bounds one probe, well inside a container engine's health-check timeout.
const healthcheckTimeout = 5 * time.Second

// healthcheck is `gateway healthcheck`: it asks the gateway of this environment for /healthz and returns
// nil only for 200 {"status":"ok"}, so an image with nothing but the binary (FROM scratch) has a health
// check. It reads the address and TLS from the flags or the same GATEWAY_ADDR and GATEWAY_TLS_CERT the
// gateway reads; an unspecified host (0.0.0.0, ::) is probed on loopback.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("gateway healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := envOr(getenv, "GATEWAY_ADDR", "127.0.0.1:8080")
	fs.StringVar(&addr, "addr", addr, "the gateway's --addr (GATEWAY_ADDR when set)")
	useTLS := fs.Bool("tls", getenv("GATEWAY_TLS_CERT") != "", "probe over HTTPS (default: when GATEWAY_TLS_CERT is set); the certificate is not checked")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("healthcheck: unexpected argument %q", fs.Arg(0))
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("healthcheck: --addr %s: %v", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	scheme := "http"
	tr := &http.Transport{Proxy: nil}
	if *useTLS {
		// A liveness probe of the gateway on this machine, with no credential in it: the certificate names the
		// public host, not the address probed, so it is not checked.
		scheme, tr.TLSClientConfig = "https", &tls.Config{InsecureSkipVerify: true}
	}
	defer tr.CloseIdleConnections()
	url := scheme + "://" + net.JoinHostPort(host, port) + "/healthz"
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %v", err)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		var uerr *neturl.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // it would repeat the method and the URL
		}
		return fmt.Errorf("healthcheck: GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var body struct{ Status string }
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body); resp.StatusCode != http.StatusOK || err != nil || body.Status != "ok" {
		return fmt.Errorf("healthcheck: GET %s: %s, status %q", url, resp.Status, body.Status)
	}
	return nil
}

// envOr is getenv(key), or def when it is empty.
func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}
