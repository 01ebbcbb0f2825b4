package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The reverse-proxy tests (proxy_nginx_e2e_test.go, proxy_caddy_e2e_test.go) run a real nginx and a real Caddy
// with the configurations of docs/deploy.md's reverse-proxy section, read out of that page so the two cannot drift, in front of two
// gateways over TLS, and drive every face through the proxy.

// proxyDocBlock returns the first fenced block of the given language in docs/deploy.md's reverse-proxy section.
func proxyDocBlock(t *testing.T, lang string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	heading := regexp.MustCompile(`\n## \d+\. Behind a reverse proxy\n`).FindStringIndex(string(raw))
	if heading == nil {
		t.Fatal("docs/deploy.md has no section \"## N. Behind a reverse proxy\"")
	}
	section := string(raw[heading[1]:])
	_, rest, ok := strings.Cut(section, "\n```"+lang+"\n")
	if !ok {
		t.Fatalf("docs/deploy.md's reverse-proxy section has no ```%s block", lang)
	}
	block, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatalf("docs/deploy.md's reverse-proxy section: the ```%s block does not end", lang)
	}
	return block + "\n"
}

// render replaces each old string of the documented configuration, which must be there exactly once: a
// documented line the test relies on cannot change unnoticed.
func render(t *testing.T, conf string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if n := strings.Count(conf, pairs[i]); n != 1 {
			t.Fatalf("the documented configuration holds %q %d times, want once:\n%s", pairs[i], n, conf)
		}
		conf = strings.Replace(conf, pairs[i], pairs[i+1], 1)
	}
	return conf
}

// freePort is a loopback port nobody listens on now, for a proxy the test starts.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// testCert writes a self-signed certificate for 127.0.0.1 into dir and returns its files and a pool trusting it.
func testCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gateway proxy test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// proxyProc is a proxy the test runs: start brings it up on its port, drop stops it so that every connection
// through it ends (and start brings it back with the same configuration).
type proxyProc interface {
	start(t *testing.T)
	drop(t *testing.T)
}

// proxyClient is one client of the proxy: its connections leave from its own loopback address, it keeps the
// proxy's cookies (its node), and speaks HTTP/2 where TLS offers it (WebSockets go over HTTP/1.1).
type proxyClient struct {
	base string // https://127.0.0.1:port
	http *http.Client
	ws   *http.Client
}

func newProxyClient(t *testing.T, base, from string, pool *x509.CertPool, jar http.CookieJar) *proxyClient {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	h2 := &http.Transport{DialContext: d.DialContext, TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	h1 := &http.Transport{DialContext: d.DialContext, TLSClientConfig: &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}}
	t.Cleanup(h2.CloseIdleConnections)
	t.Cleanup(h1.CloseIdleConnections)
	return &proxyClient{base: base, http: &http.Client{Transport: contractTransport{next: h2}, Jar: jar}, ws: &http.Client{Transport: h1, Jar: jar}}
}

func newJar(t *testing.T) http.CookieJar {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return jar
}

var bearerHdr = map[string]string{"Authorization": "Bearer " + testToken}

// do sends a request through the proxy and returns the response with its body read.
func (c *proxyClient) do(t *testing.T, method, path string, body string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s through the proxy: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s through the proxy: reading: %v", method, path, err)
	}
	return resp, data
}

// dial opens a WebSocket through the proxy with the token.
func (c *proxyClient) dial(t *testing.T, ctx context.Context, path string) *websocket.Conn {
	t.Helper()
	url := strings.Replace(c.base, "https", "wss", 1) + path
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: c.ws, HTTPHeader: http.Header{"Authorization": {"Bearer " + testToken}}})
	if err != nil {
		st := 0
		if resp != nil {
			st = resp.StatusCode
		}
		t.Fatalf("WebSocket %s through the proxy: %v (status %d)", path, err, st)
	}
	conn.SetReadLimit(64 << 20)
	t.Cleanup(func() { conn.CloseNow() })
	return conn
}

// readLog reads a session socket up to replay_complete (or, when untilTurnEnd, up to `_gateway/turn_ended`)
// and returns the logged frames, checking that they run on from after+1 without a gap or a repeat.
func readLog(t *testing.T, ctx context.Context, c *websocket.Conn, after uint64, untilTurnEnd bool) []logEntry {
	t.Helper()
	var out []logEntry
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("session socket after %d frames: %v", len(out), err)
		}
		f, err := parseWire(data)
		if err != nil {
			t.Fatalf("non-JSON frame %q", data)
		}
		if f.Method == "_gateway/resync_required" {
			t.Fatalf("resync required: %s", data)
		}
		if seq := f.Params.Meta.Gateway.Seq; seq > 0 {
			if want := after + uint64(len(out)) + 1; seq != want {
				t.Fatalf("frame seq %d, want %d (a frame lost or repeated)", seq, want)
			}
			out = append(out, logEntry{seq, data})
		}
		if !untilTurnEnd && f.Method == "_gateway/replay_complete" || untilTurnEnd && f.Method == "_gateway/turn_ended" {
			return out
		}
	}
}

// sseFrames reads an SSE response until the event whose id is last, returning the data of the events with ids
// (the logged frames) and checking their ids run on from after+1.
func sseFrames(t *testing.T, body io.Reader, after, last uint64) []logEntry {
	t.Helper()
	br := bufio.NewReader(body)
	var out []logEntry
	var id string
	var data []byte
	for after+uint64(len(out)) < last {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("SSE through the proxy after %d events: %v", len(out), err)
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		switch {
		case len(line) == 0:
			if id != "" {
				want := fmt.Sprint(after + uint64(len(out)) + 1)
				if id != want {
					t.Fatalf("SSE id %s, want %s (a frame lost or repeated)", id, want)
				}
				out = append(out, logEntry{after + uint64(len(out)) + 1, data})
			}
			id, data = "", nil
		case bytes.HasPrefix(line, []byte("id: ")):
			id = string(line[4:])
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data, line[6:]...)
		}
	}
	return out
}

// sameFrames checks that two readings of the log hold the same bytes.
func sameFrames(t *testing.T, what string, got, want []logEntry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d frames, the WebSocket had %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i].Seq != want[i].Seq || !bytes.Equal(got[i].Raw, want[i].Raw) {
			t.Fatalf("%s: frame %d differs:\n%s\n%s", what, i, got[i].Raw, want[i].Raw)
		}
	}
}

// proxyGateways starts the two gateways behind the proxy: token auth, the proxy trusted for X-Forwarded-For
// and for the SSO header (which the documented configurations strip), one workspace. It returns their
// host:port addresses.
func proxyGateways(t *testing.T) ([]*gateway, []string) {
	t.Helper()
	work := t.TempDir()
	var gws []*gateway
	var addrs []string
	for i := 0; i < 2; i++ {
		g := startGateway(t, "--token", testToken, "--rate-limit", "0", "--workdir", work,
			"--trusted-proxies", "127.0.0.1", "--trusted-user-header", "X-Forwarded-User",
			// No keep-alive may be what gets a stream's headers through the proxy: the client would wait for it.
			"--ws-ping-interval", "10m", "--sse-heartbeat", "10m")
		gws = append(gws, g)
		addrs = append(addrs, strings.TrimPrefix(g.base, "http://"))
	}
	return gws, addrs
}

// waitProxyUp polls /healthz through the proxy (bounded) until it answers from the gateway (or its SSO check);
// exited reports a dead process.
func waitProxyUp(t *testing.T, base string, tlsConf *tls.Config, exited <-chan struct{}, logs func() string) {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: tlsConf}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := c.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 { // 200, or 401 from an SSO check before the gateway
				return
			}
		}
		select {
		case <-exited:
			t.Fatalf("the proxy exited:\n%s", logs())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("the proxy did not answer /healthz within 30s:\n%s", logs())
}

// ownerOf is the gateway that holds session id (the gateways behind the proxy are separate, not a cluster).
func gatewayHolding(t *testing.T, gws []*gateway, id string) *gateway {
	t.Helper()
	for _, g := range gws {
		if st, _, _ := g.request("GET", "/v1/sessions/"+id, nil, bearerHdr); st == http.StatusOK {
			return g
		}
	}
	t.Fatalf("no gateway holds session %s", id)
	return nil
}

// exerciseProxy drives every face of the gateways through the proxy p at base.
func exerciseProxy(t *testing.T, p proxyProc, base string, pool *x509.CertPool, gws []*gateway) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	jar := newJar(t)
	c := newProxyClient(t, base, "127.0.0.2", pool, jar)
	var sess sessionJSON
	var wsLog []logEntry

	t.Run("rest", func(t *testing.T) {
		resp, body := c.do(t, "POST", "/v1/sessions", `{}`, bearerHdr)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create a session: %d %s", resp.StatusCode, body)
		}
		if err := json.Unmarshal(body, &sess); err != nil {
			t.Fatal(err)
		}
		if resp.ProtoMajor != 2 {
			t.Errorf("the client spoke %s to the proxy, want HTTP/2", resp.Proto)
		}
		cookies := jar.Cookies(resp.Request.URL)
		if len(cookies) == 0 || cookies[0].Name != "acpgw_node" {
			t.Fatalf("the proxy set no affinity cookie: %v", cookies)
		}
		resp, body = c.do(t, "POST", "/v1/sessions/"+sess.ID+"/prompt?wait=true&timeout=60s", `{"text":"quick"}`, bearerHdr)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"end_turn"`) {
			t.Fatalf("prompt: %d %s", resp.StatusCode, body)
		}
	})

	t.Run("websocket", func(t *testing.T) {
		ws := c.dial(t, ctx, "/v1/sessions/"+sess.ID+"/ws?after=0")
		wsLog = readLog(t, ctx, ws, 0, false)
		if len(wsLog) == 0 {
			t.Fatal("the replay through the proxy was empty")
		}
		// Live frames stream through as the turn runs.
		if resp, body := c.do(t, "POST", "/v1/sessions/"+sess.ID+"/prompt", `{"text":"quick"}`, bearerHdr); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("prompt: %d %s", resp.StatusCode, body)
		}
		wsLog = append(wsLog, readLog(t, ctx, ws, uint64(len(wsLog)), true)...)
		ws.Close(websocket.StatusNormalClosure, "")
	})

	t.Run("sse", func(t *testing.T) {
		sctx, scancel := context.WithCancel(ctx)
		defer scancel()
		req, _ := http.NewRequestWithContext(sctx, "GET", base+"/v1/sessions/"+sess.ID+"/events?after=0", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
			t.Fatalf("SSE: %d over %s", resp.StatusCode, resp.Proto)
		}
		sameFrames(t, "SSE", sseFrames(t, resp.Body, 0, uint64(len(wsLog))), wsLog)
		// A stream opened at the head has nothing to replay: its headers and first event still come at once
		// (the gateways' heartbeat is 10 minutes here, so nothing else could bring them).
		req, _ = http.NewRequestWithContext(sctx, "GET", fmt.Sprintf("%s/v1/sessions/%s/events?after=%d&epoch=%s", base, sess.ID, len(wsLog), sess.Epoch), nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+testToken)
		head, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer head.Body.Close()
		line, err := bufio.NewReader(head.Body).ReadString('\n')
		if head.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("SSE at the head: %d, first line %q, %v", head.StatusCode, line, err)
		}
	})

	t.Run("pages", func(t *testing.T) {
		var got []logEntry
		for after := uint64(0); after < uint64(len(wsLog)); {
			resp, body := c.do(t, "GET", fmt.Sprintf("/v1/sessions/%s/events?after=%d&limit=3", sess.ID, after), "", bearerHdr)
			var p eventsPage
			if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &p) != nil || len(p.Frames) == 0 {
				t.Fatalf("page after %d: %d %s", after, resp.StatusCode, body)
			}
			for _, f := range p.Frames {
				after++
				got = append(got, logEntry{after, f})
			}
		}
		sameFrames(t, "JSON pages", got, wsLog)
	})

	t.Run("acp websocket", func(t *testing.T) {
		conn := c.dial(t, ctx, "/acp")
		send := func(msg string) {
			if err := conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
				t.Fatal(err)
			}
		}
		answer := func(id string) json.RawMessage {
			for {
				_, data, err := conn.Read(ctx)
				if err != nil {
					t.Fatalf("/acp through the proxy, waiting for answer %s: %v", id, err)
				}
				var m struct {
					ID     json.RawMessage
					Result json.RawMessage
					Error  json.RawMessage
				}
				_ = json.Unmarshal(data, &m)
				if string(m.ID) == id && m.Result == nil {
					t.Fatalf("answer %s: %s", id, data)
				}
				if string(m.ID) == id {
					return m.Result
				}
			}
		}
		send(acpInitialize)
		answer("1")
		send(`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"` + sess.ID + `","cwd":"` + sess.Cwd + `","mcpServers":[]}}`)
		answer("2")
		send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + sess.ID + `","prompt":[{"type":"text","text":"quick"}]}}`)
		if res := answer("3"); !strings.Contains(string(res), "end_turn") {
			t.Fatalf("session/prompt over /acp: %s", res)
		}
		conn.Close(websocket.StatusNormalClosure, "")
	})

	t.Run("acp streamable http", func(t *testing.T) {
		resp, body := c.do(t, "POST", "/acp", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`, bearerHdr)
		conn := resp.Header.Get("Acp-Connection-Id")
		if resp.StatusCode != http.StatusOK || conn == "" || resp.ProtoMajor != 2 {
			t.Fatalf("initialize: %d over %s, connection %q: %s", resp.StatusCode, resp.Proto, conn, body)
		}
		withConn := map[string]string{"Authorization": "Bearer " + testToken, "Acp-Connection-Id": conn}
		sctx, scancel := context.WithCancel(ctx)
		defer scancel()
		// open GETs a stream (the connection's, or a session's with Acp-Session-Id), over the same HTTP/2
		// connection as the POSTs, and returns a function that reads it up to the answer with the given id.
		open := func(hdr map[string]string) func(id string) string {
			req, _ := http.NewRequestWithContext(sctx, "GET", base+"/acp", nil)
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			req.Header.Set("Accept", "text/event-stream")
			stream, err := c.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { stream.Body.Close() })
			if stream.StatusCode != http.StatusOK || stream.ProtoMajor != 2 {
				t.Fatalf("stream %v: %d over %s", hdr, stream.StatusCode, stream.Proto)
			}
			sc := bufio.NewScanner(stream.Body)
			sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
			return func(id string) string {
				for sc.Scan() {
					data, ok := strings.CutPrefix(sc.Text(), "data: ")
					if !ok {
						continue
					}
					var m struct{ ID json.RawMessage }
					if json.Unmarshal([]byte(data), &m) == nil && string(m.ID) == id {
						return data
					}
				}
				t.Fatalf("the stream ended before answer %s: %v", id, sc.Err())
				return ""
			}
		}
		connAnswer := open(withConn)
		// Every POST of the connection must reach the node that holds it: the cookie sees to that.
		post := func(msg string, hdr map[string]string) {
			if resp, body := c.do(t, "POST", "/acp", msg, hdr); resp.StatusCode != http.StatusAccepted {
				t.Fatalf("POST %s: %d %s", msg, resp.StatusCode, body)
			}
		}
		post(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"`+sess.Cwd+`","mcpServers":[]}}`, withConn)
		var created struct{ Result struct{ SessionID string } }
		_ = json.Unmarshal([]byte(connAnswer("1")), &created)
		if created.Result.SessionID == "" {
			t.Fatal("session/new over Streamable HTTP gave no session")
		}
		withSession := mergeHdr(withConn, map[string]string{"Acp-Session-Id": created.Result.SessionID})
		sessionAnswer := open(withSession)
		post(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"`+created.Result.SessionID+`","prompt":[{"type":"text","text":"quick"}]}}`, withSession)
		if a := sessionAnswer("2"); !strings.Contains(a, "end_turn") {
			t.Fatalf("session/prompt over Streamable HTTP: %s", a)
		}
		if resp, body := c.do(t, "DELETE", "/acp", "", withConn); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("DELETE: %d %s", resp.StatusCode, body)
		}
	})

	t.Run("client address", func(t *testing.T) {
		// Two clients of the same node (one cookie jar) from two addresses: the one guessing tokens, even
		// posing as the other in its own X-Forwarded-For, is limited alone.
		guesser := newProxyClient(t, base, "127.0.0.3", pool, jar)
		victim := newProxyClient(t, base, "127.0.0.4", pool, jar)
		limited := false
		for i := 0; i < 40 && !limited; i++ {
			resp, body := guesser.do(t, "GET", "/v1/sessions", "", map[string]string{"Authorization": "Bearer wrong", "X-Forwarded-For": "127.0.0.4"})
			switch resp.StatusCode {
			case http.StatusUnauthorized:
			case http.StatusTooManyRequests:
				limited = true
			default:
				t.Fatalf("guess %d: %d %s", i, resp.StatusCode, body)
			}
		}
		if !limited {
			t.Fatal("40 wrong tokens through the proxy were never limited")
		}
		if resp, body := victim.do(t, "GET", "/v1/sessions", "", bearerHdr); resp.StatusCode != http.StatusOK {
			t.Fatalf("another client of the proxy with the right token: %d %s", resp.StatusCode, body)
		}
		// The documented configuration strips a client's own SSO header: naming a user gets it nothing.
		sso := newProxyClient(t, base, "127.0.0.5", pool, jar)
		if resp, body := sso.do(t, "GET", "/v1/me", "", map[string]string{"X-Forwarded-User": "mallory"}); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a client's own X-Forwarded-User through the proxy: %d %s", resp.StatusCode, body)
		}
	})

	t.Run("resume after the proxy drops", func(t *testing.T) {
		ws := c.dial(t, ctx, "/v1/sessions/"+sess.ID+"/ws?after=0")
		before := readLog(t, ctx, ws, 0, false)
		sameFrames(t, "the log's start", before[:len(wsLog)], wsLog)
		head := uint64(len(before))
		p.drop(t)
		for i := 0; ; i++ {
			if _, _, err := ws.Read(ctx); err != nil {
				break
			}
			if i == 100 {
				t.Fatal("the session socket outlived the proxy")
			}
		}
		// A turn runs while no client can reach the gateway: its frames wait in the log.
		owner := gatewayHolding(t, gws, sess.ID)
		if st, _, body := owner.request("POST", "/v1/sessions/"+sess.ID+"/prompt?wait=true", []byte(`{"text":"quick"}`), bearerHdr); st != http.StatusOK {
			t.Fatalf("prompt on the gateway: %d %s", st, body)
		}
		p.start(t)
		ws = c.dial(t, ctx, fmt.Sprintf("/v1/sessions/%s/ws?after=%d&epoch=%s", sess.ID, head, sess.Epoch))
		missed := readLog(t, ctx, ws, head, false)
		if len(missed) == 0 {
			t.Fatal("the resumed socket replayed nothing of the turn it missed")
		}
		// SSE resumes the same way, with Last-Event-ID.
		sctx, scancel := context.WithCancel(ctx)
		defer scancel()
		req, _ := http.NewRequestWithContext(sctx, "GET", base+"/v1/sessions/"+sess.ID+"/events?epoch="+sess.Epoch, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Last-Event-ID", fmt.Sprint(head))
		resp, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		sameFrames(t, "resumed SSE", sseFrames(t, resp.Body, head, head+uint64(len(missed))), missed)
		// Nothing was lost or repeated across the drop: the two readings are the whole log, as a reader on the
		// gateway itself gets it.
		direct, _, err := websocket.Dial(ctx, owner.wsURL("/v1/sessions/"+sess.ID+"/ws?after=0"), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + testToken}}})
		if err != nil {
			t.Fatal(err)
		}
		defer direct.CloseNow()
		direct.SetReadLimit(64 << 20)
		sameFrames(t, "the log across the drop", append(before, missed...), readLog(t, ctx, direct, 0, false))
	})
}

// TestProxyTimeoutsFitTheGateway: the read and send timeouts of the documented nginx configuration are longer
// than every silence of the gateway's defaults (the WebSocket ping interval, the SSE heartbeat, the longest
// wait of a JSON page), so the proxy never cuts a live stream; raising a default past them fails here.
func TestProxyTimeoutsFitTheGateway(t *testing.T) {
	cfg, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	g := startGateway(t)
	s := g.createSession(map[string]any{})
	_, _, body := g.request("GET", "/v1/sessions/"+s.ID+"/events?wait=1000h", nil, nil)
	var p struct{ Detail string }
	_ = json.Unmarshal([]byte(body), &p)
	_, maxWait, ok := strings.Cut(p.Detail, " to ")
	pageWait, err := time.ParseDuration(maxWait)
	if !ok || err != nil {
		t.Fatalf("no longest page wait in %q", body)
	}
	silences := map[string]time.Duration{"--ws-ping-interval": cfg.wsPingInterval, "--sse-heartbeat": cfg.sseHeartbeat, "the longest page wait": pageWait}
	conf := proxyDocBlock(t, "nginx")
	for _, directive := range []string{"proxy_read_timeout", "proxy_send_timeout"} {
		_, rest, ok := strings.Cut(conf, "\n        "+directive+" ")
		if !ok {
			t.Fatalf("the nginx configuration sets no %s", directive)
		}
		v, _, _ := strings.Cut(rest, ";")
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s %q: %v", directive, v, err)
		}
		for what, silence := range silences {
			if d <= silence {
				t.Errorf("%s %s is not longer than %s (%s)", directive, d, what, silence)
			}
		}
	}
}
