package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestACPStreamableHTTPSameGuards: `/acp` over Streamable HTTP, through the real gateway, is guarded as
// every other face: the bearer token (a ticket opens its GET stream, as it opens the WebSocket), the origin
// policy, CORS that lets an allowed page send and read the Acp-* headers; and a turn's answer arrives on the
// stream the SDK's client reads. Every response is checked against openapi.yaml (contractTransport).
func TestACPStreamableHTTPSameGuards(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, "--token", testToken, "--rate-limit", "0", "--allowed-origins", "app.example", "--workdir", dir)
	bearer := map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/json"}
	initBody := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)

	if st, code, body := g.request("POST", "/acp", initBody, map[string]string{"Content-Type": "application/json"}); st != 401 || code != "unauthorized" {
		t.Fatalf("initialize without a token: %d %s", st, body)
	}
	if st, code, body := g.request("POST", "/acp", initBody, mergeHdr(bearer, map[string]string{"Origin": "https://evil.example"})); st != 403 || code != "forbidden_origin" {
		t.Fatalf("initialize from a foreign origin: %d %s", st, body)
	}
	// A preflight from the allowed page may send the Acp-* headers.
	pre := g.rawResponse("OPTIONS", "/acp", map[string]string{"Origin": "http://app.example", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "acp-connection-id, acp-session-id, content-type, authorization"})
	if allow := pre.Header.Get("Access-Control-Allow-Headers"); pre.StatusCode != 204 || !strings.Contains(allow, "Acp-Connection-Id") || !strings.Contains(allow, "Acp-Session-Id") {
		t.Fatalf("preflight: %d, Allow-Headers %q", pre.StatusCode, allow)
	}

	req, _ := http.NewRequest("POST", g.base+"/acp", bytes.NewReader(initBody))
	for k, v := range mergeHdr(bearer, map[string]string{"Origin": "http://app.example"}) {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	conn := resp.Header.Get("Acp-Connection-Id")
	if resp.StatusCode != 200 || conn == "" || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Acp-Connection-Id") {
		t.Fatalf("initialize: %d, connection %q, expose %q", resp.StatusCode, conn, resp.Header.Get("Access-Control-Expose-Headers"))
	}

	// The connection's stream, opened with a ticket as a browser would.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sreq, _ := http.NewRequestWithContext(ctx, "GET", g.base+"/acp?ticket="+g.ticketFor(""), nil)
	sreq.Header.Set("Accept", "text/event-stream")
	sreq.Header.Set("Acp-Connection-Id", conn)
	stream, err := http.DefaultClient.Do(sreq)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != 200 {
		t.Fatalf("stream: %d", stream.StatusCode)
	}
	withConn := mergeHdr(bearer, map[string]string{"Acp-Connection-Id": conn})
	if st, _, body := g.request("POST", "/acp", []byte(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"`+dir+`","mcpServers":[]}}`), withConn); st != 202 {
		t.Fatalf("session/new: %d %s", st, body)
	}
	sc := bufio.NewScanner(stream.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var sid string
	for sid == "" && sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m struct {
			ID     json.RawMessage
			Result struct{ SessionID string }
			Error  json.RawMessage
		}
		if err := json.Unmarshal([]byte(data), &m); err != nil || m.Error != nil {
			t.Fatalf("stream event %q", data)
		}
		if string(m.ID) == "1" {
			sid = m.Result.SessionID
		}
	}
	if sid == "" {
		t.Fatalf("no session/new answer on the connection stream: %v\n%s", sc.Err(), g.logs.String())
	}
	// The session is an ordinary gateway session.
	if st := g.do("GET", "/v1/sessions/"+sid, nil, nil); st != 401 {
		t.Fatalf("REST without the token: %d", st)
	}
	if st, _, body := g.request("GET", "/v1/sessions/"+sid, nil, bearer); st != 200 {
		t.Fatalf("REST: %d %s", st, body)
	}
	if st, _, body := g.request("DELETE", "/acp", nil, withConn); st != 202 {
		t.Fatalf("DELETE: %d %s", st, body)
	}
	if st, code, body := g.request("POST", "/acp", []byte(`{"jsonrpc":"2.0","id":2,"method":"session/list"}`), withConn); st != 404 || code != "unknown_connection" {
		t.Fatalf("after DELETE: %d %s", st, body)
	}
}
