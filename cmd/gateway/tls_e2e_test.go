package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// tlsDo sends one request with the token on client and returns the response (the caller closes its body).
func tlsDo(t *testing.T, ctx context.Context, client *http.Client, g *gateway, method, path, body string, hdr map[string]string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// dialTLS opens a WebSocket on client (an HTTP/1.1 upgrade over TLS) and collects its frames.
func dialTLS(t *testing.T, g *gateway, client *http.Client, path string, subprotocols ...string) (*wsClient, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, g.wsURL(path), &websocket.DialOptions{
		HTTPClient: client, HTTPHeader: http.Header{"Authorization": {"Bearer " + testToken}}, Subprotocols: subprotocols,
	})
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	c.SetReadLimit(64 << 20)
	w := &wsClient{t: t, c: c, notify: make(chan struct{}, 1), closed: make(chan struct{}), status: -1}
	go w.readLoop()
	t.Cleanup(func() { c.CloseNow(); <-w.closed })
	return w, resp
}

// readTLSEvent returns the data of the first event on body that holds want.
func readTLSEvent(t *testing.T, body io.Reader, want string) string {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, want) {
			return data
		}
	}
	t.Fatalf("stream ended before an event with %q: %v", want, sc.Err())
	return ""
}

const quickPrompt = `{"prompt":[{"type":"text","text":"quick"}]}`

// TestTLSEveryFace: with --tls-cert/--tls-key every face works for a client that trusts only the test CA:
// REST, SSE and /acp Streamable HTTP over HTTP/2 (negotiated by ALPN), the session WebSocket and the /acp
// WebSocket over an HTTP/1.1 upgrade on the same listener.
func TestTLSEveryFace(t *testing.T) {
	ca := newTestCA(t)
	cert, key := ca.writeLeaf(t, t.TempDir(), 2)
	g := startTLSGateway(t, cert, key, "--token", testToken, "--rate-limit", "0")
	if !strings.Contains(g.logs.String(), `url=https://127.0.0.1:`) {
		t.Errorf("the listening line does not say https:\n%s", g.logs.String())
	}
	client := ca.client()
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// ALPN offers both: h2 to clients that want it, http/1.1 to those (a browser's WebSocket) that ask only for it.
	for _, offer := range [][]string{{"h2", "http/1.1"}, {"http/1.1"}} {
		tc, err := tls.Dial("tcp", strings.TrimPrefix(g.base, "https://"), &tls.Config{RootCAs: ca.pool, NextProtos: offer})
		if err != nil {
			t.Fatalf("TLS handshake offering %q: %v", offer, err)
		}
		if got := tc.ConnectionState().NegotiatedProtocol; got != offer[0] {
			t.Errorf("client offering %q got ALPN %q, want %q", offer, got, offer[0])
		}
		tc.Close()
	}

	// REST over h2.
	resp := tlsDo(t, ctx, client, g, "POST", "/v1/sessions", `{}`, nil)
	var s sessionJSON
	err := json.NewDecoder(resp.Body).Decode(&s)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create session: %d %v", resp.StatusCode, err)
	}
	if resp.ProtoMajor != 2 || resp.TLS == nil || resp.TLS.NegotiatedProtocol != "h2" {
		t.Fatalf("REST: proto %s, ALPN %v; want HTTP/2 over h2", resp.Proto, resp.TLS)
	}

	// SSE over h2, opened before the turn so it carries the turn live.
	sse := tlsDo(t, ctx, client, g, "GET", "/v1/sessions/"+s.ID+"/events", "", map[string]string{"Accept": "text/event-stream"})
	defer sse.Body.Close()
	if sse.StatusCode != 200 || sse.ProtoMajor != 2 {
		t.Fatalf("SSE: %d %s; want 200 over HTTP/2", sse.StatusCode, sse.Proto)
	}

	// The session WebSocket: an HTTP/1.1 upgrade over TLS, beside the h2 connection.
	ws, up := dialTLS(t, g, client, "/v1/sessions/"+s.ID+"/ws")
	if up.ProtoMajor != 1 || up.TLS == nil || up.TLS.NegotiatedProtocol == "h2" {
		t.Fatalf("WebSocket upgrade: proto %s, ALPN %q; want HTTP/1.1", up.Proto, up.TLS.NegotiatedProtocol)
	}
	pr := tlsDo(t, ctx, client, g, "POST", "/v1/sessions/"+s.ID+"/prompt", quickPrompt, nil)
	var turn struct{ TurnID string }
	err = json.NewDecoder(pr.Body).Decode(&turn)
	pr.Body.Close()
	if err != nil || pr.StatusCode != http.StatusAccepted || turn.TurnID == "" {
		t.Fatalf("prompt: %d %v", pr.StatusCode, err)
	}
	ws.waitFor("the turn's end on the WebSocket", turnEnded(turn.TurnID))
	readTLSEvent(t, sse.Body, `"_gateway/turn_ended"`)

	// The /acp WebSocket.
	acp, _ := dialTLS(t, g, client, "/acp")
	acp.send(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}})
	acp.waitFor("the initialize answer on /acp", func(f frame) bool { return string(f.ID) == "0" && f.Error == nil })

	// /acp Streamable HTTP over h2: initialize, the connection's stream, session/new answered on it.
	ini := tlsDo(t, ctx, client, g, "POST", "/acp", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`, nil)
	io.Copy(io.Discard, ini.Body)
	ini.Body.Close()
	conn := ini.Header.Get("Acp-Connection-Id")
	if ini.StatusCode != 200 || conn == "" || ini.ProtoMajor != 2 {
		t.Fatalf("/acp initialize: %d %s, connection %q; want 200 over HTTP/2", ini.StatusCode, ini.Proto, conn)
	}
	stream := tlsDo(t, ctx, client, g, "GET", "/acp", "", map[string]string{"Accept": "text/event-stream", "Acp-Connection-Id": conn})
	defer stream.Body.Close()
	if stream.StatusCode != 200 || stream.ProtoMajor != 2 {
		t.Fatalf("/acp stream: %d %s; want 200 over HTTP/2", stream.StatusCode, stream.Proto)
	}
	sn := tlsDo(t, ctx, client, g, "POST", "/acp", `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"`+s.Cwd+`","mcpServers":[]}}`,
		map[string]string{"Acp-Connection-Id": conn})
	io.Copy(io.Discard, sn.Body)
	sn.Body.Close()
	if sn.StatusCode != http.StatusAccepted || sn.ProtoMajor != 2 {
		t.Fatalf("/acp session/new: %d %s", sn.StatusCode, sn.Proto)
	}
	if data := readTLSEvent(t, stream.Body, `"id":1`); !strings.Contains(data, `"sessionId"`) {
		t.Fatalf("session/new answer on the /acp stream: %s", data)
	}
}

// waitLogCount waits until the gateway's log holds want lines containing msg.
func waitLogCount(g *gateway, msg string, want int) {
	g.t.Helper()
	deadline := time.After(30 * time.Second)
	for strings.Count(g.logs.String(), msg) < want {
		select {
		case err := <-g.done:
			g.done <- err
			g.t.Fatalf("gateway stopped (%v) waiting for %q:\n%s", err, msg, g.logs.String())
		case <-deadline:
			g.t.Fatalf("no %d× %q in the log:\n%s", want, msg, g.logs.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// servedSerial is the serial of the leaf a new TLS connection to g is shown.
func servedSerial(t *testing.T, ca *testCA, g *gateway) int64 {
	t.Helper()
	client := ca.client() // a fresh transport: a new connection, a new handshake
	defer client.CloseIdleConnections()
	resp := tlsDo(t, context.Background(), client, g, "GET", "/healthz", "", nil)
	resp.Body.Close()
	return resp.TLS.PeerCertificates[0].SerialNumber.Int64()
}

// TestTLSReloadOnSIGHUP: SIGHUP swaps the served pair for the files' new one without stopping the gateway or
// dropping an open WebSocket; a pair that no longer loads is logged and the previous one stays served.
func TestTLSReloadOnSIGHUP(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	cert, key := ca.writeLeaf(t, dir, 2)
	g := startTLSGateway(t, cert, key, "--token", testToken, "--rate-limit", "0")
	if got := servedSerial(t, ca, g); got != 2 {
		t.Fatalf("served serial %d, want 2", got)
	}
	client := ca.client()
	defer client.CloseIdleConnections()
	resp := tlsDo(t, context.Background(), client, g, "POST", "/v1/sessions", `{}`, nil)
	var s sessionJSON
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create session: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	ws, up := dialTLS(t, g, client, "/v1/sessions/"+s.ID+"/ws")
	if serial := up.TLS.PeerCertificates[0].SerialNumber.Int64(); serial != 2 {
		t.Fatalf("WebSocket opened with serial %d, want 2", serial)
	}

	ca.writeLeaf(t, dir, 3)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLogCount(g, `msg="tls certificate reloaded"`, 1)
	if got := servedSerial(t, ca, g); got != 3 {
		t.Fatalf("after SIGHUP a new connection sees serial %d, want 3", got)
	}
	// The socket opened on the old pair is still up and still carries the session.
	pr := tlsDo(t, context.Background(), client, g, "POST", "/v1/sessions/"+s.ID+"/prompt", quickPrompt, nil)
	var turn struct{ TurnID string }
	if err := json.NewDecoder(pr.Body).Decode(&turn); err != nil || pr.StatusCode != http.StatusAccepted {
		t.Fatalf("prompt: %d %v", pr.StatusCode, err)
	}
	pr.Body.Close()
	ws.waitFor("the turn's end on the WebSocket opened before the reload", turnEnded(turn.TurnID))

	// A half-written renewal: the old pair stays, the gateway goes on.
	if err := os.WriteFile(cert, []byte("-----BEGIN CERT"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLogCount(g, `msg="tls certificate not reloaded; the previous one stays in force" err="--tls-cert `+cert+`: no PEM CERTIFICATE block in the file"`, 1)
	if got := servedSerial(t, ca, g); got != 3 {
		t.Fatalf("after a failed reload a new connection sees serial %d, want 3", got)
	}
	if err := g.stop(); err != nil {
		t.Fatalf("gateway stopped with %v", err)
	}
}

// TestTLSConnectionsStillAccounted: the connection limits see through TLS. An authenticated WebSocket leaves
// the unauthenticated pool, so idle TLS connections that never send a request cannot push it out.
func TestTLSConnectionsStillAccounted(t *testing.T) {
	ca := newTestCA(t)
	cert, key := ca.writeLeaf(t, t.TempDir(), 2)
	g := startTLSGateway(t, cert, key, "--token", testToken, "--rate-limit", "0", "--max-unauthenticated-conns", "1")
	client := ca.client()
	defer client.CloseIdleConnections()
	resp := tlsDo(t, context.Background(), client, g, "POST", "/v1/sessions", `{}`, nil)
	var s sessionJSON
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create session: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	ws, _ := dialTLS(t, g, client, "/v1/sessions/"+s.ID+"/ws")
	ws.waitFor("the replay's end", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
	// Two handshakes that never send a request: past the cap of 1, the oldest unauthenticated one is closed.
	for i := 0; i < 2; i++ {
		tc, err := tls.Dial("tcp", strings.TrimPrefix(g.base, "https://"), &tls.Config{RootCAs: ca.pool})
		if err != nil {
			t.Fatal(err)
		}
		defer tc.Close()
	}
	pr := tlsDo(t, context.Background(), client, g, "POST", "/v1/sessions/"+s.ID+"/prompt", quickPrompt, nil)
	var turn struct{ TurnID string }
	if err := json.NewDecoder(pr.Body).Decode(&turn); err != nil || pr.StatusCode != http.StatusAccepted {
		t.Fatalf("prompt: %d %v", pr.StatusCode, err)
	}
	pr.Body.Close()
	ws.waitFor("the turn's end on the authenticated WebSocket", turnEnded(turn.TurnID))
}
