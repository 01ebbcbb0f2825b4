package main

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// An /acp Streamable HTTP connection acts as the principal whose initialize made it: another user can neither
// use its id nor, through a connection of their own, see the first user's sessions.
func TestOwnershipOverStreamableHTTP(t *testing.T) {
	g, _ := startWithUsers(t, "--workdir", t.TempDir())
	sid := g.createSessionWith(as("ann"))
	post := func(who, conn, session string, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", g.base+"/acp", bytes.NewReader([]byte(body)))
		for k, v := range as(who) {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", "application/json")
		if conn != "" {
			req.Header.Set("Acp-Connection-Id", conn)
		}
		if session != "" {
			req.Header.Set("Acp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		return resp, b.String()
	}
	initialize := func(who string) string {
		resp, body := post(who, "", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
		if resp.StatusCode != 200 || resp.Header.Get("Acp-Connection-Id") == "" {
			t.Fatalf("initialize as %s: %d %s", who, resp.StatusCode, body)
		}
		return resp.Header.Get("Acp-Connection-Id")
	}
	annConn, bobConn := initialize("ann"), initialize("bob")

	list := `{"jsonrpc":"2.0","id":7,"method":"session/list","params":{}}`
	if resp, body := post("bob", annConn, "", list); resp.StatusCode != 404 || !strings.Contains(body, "unknown_connection") {
		t.Errorf("bob posting on ann's connection: %d %s, want 404 unknown_connection", resp.StatusCode, body)
	}
	// ann's session is, to bob, a session that does not exist: the same answer as for a made-up id.
	prompt := func(id string) string {
		return `{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"` + id + `","prompt":[{"type":"text","text":"hi"}]}}`
	}
	r1, b1 := post("bob", bobConn, sid, prompt(sid))
	r2, b2 := post("bob", bobConn, ghostSession, prompt(ghostSession))
	if r1.StatusCode != r2.StatusCode || strings.ReplaceAll(b1, sid, "<id>") != strings.ReplaceAll(b2, ghostSession, "<id>") {
		t.Errorf("prompt on ann's session as bob: %d %s; on no session: %d %s", r1.StatusCode, b1, r2.StatusCode, b2)
	}

	// session/list on bob's own connection leaves ann's session out.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sreq, _ := http.NewRequestWithContext(ctx, "GET", g.base+"/acp", nil)
	for k, v := range as("bob") {
		sreq.Header.Set(k, v)
	}
	sreq.Header.Set("Accept", "text/event-stream")
	sreq.Header.Set("Acp-Connection-Id", bobConn)
	stream, err := http.DefaultClient.Do(sreq)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if resp, body := post("bob", bobConn, "", list); resp.StatusCode != 202 {
		t.Fatalf("session/list as bob: %d %s", resp.StatusCode, body)
	}
	sc := bufio.NewScanner(stream.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || !strings.Contains(line, `"id":7`) {
			continue
		}
		if !strings.Contains(line, `"sessions"`) || strings.Contains(line, sid) {
			t.Errorf("session/list as bob over HTTP: %s (ann's session %s must not be listed)", line, sid)
		}
		return
	}
	t.Fatalf("no session/list answer on bob's stream: %v", sc.Err())
}
