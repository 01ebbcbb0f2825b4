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

// httpACP is a client of /acp over Streamable HTTP as one users-file user.
type httpACP struct {
	t    *testing.T
	g    *gateway
	who  string
	conn string
}

func (c *httpACP) post(session, body string) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.g.base+"/acp", strings.NewReader(body))
	for k, v := range as(c.who) {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.conn != "" {
		req.Header.Set("Acp-Connection-Id", c.conn)
	}
	if session != "" {
		req.Header.Set("Acp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	resp.Body.Close()
	return resp, b.String()
}

// stream opens the connection's stream (session "") or a session's: its data lines arrive on the channel,
// which is closed when the stream ends.
func (c *httpACP) stream(ctx context.Context, session string) <-chan string {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", c.g.base+"/acp", nil)
	for k, v := range as(c.who) {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Acp-Connection-Id", c.conn)
	if session != "" {
		req.Header.Set("Acp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		c.t.Fatalf("open stream %q: %v %v", session, err, resp)
	}
	out := make(chan string, 256)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				select {
				case out <- l:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// lineWith waits (bounded) for a line holding every one of parts.
func lineWith(t *testing.T, ch <-chan string, parts ...string) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended before a line with %q", parts)
			}
			all := true
			for _, p := range parts {
				all = all && strings.Contains(l, p)
			}
			if all {
				return l
			}
		case <-deadline:
			t.Fatalf("no line with %q", parts)
		}
	}
}

// TestUnshareDetachesStreamableHTTP: bob loads ann's shared session over /acp Streamable HTTP; ann ends the
// share: the connection is detached from the session (it leaves the session's watchers, its log is no longer
// forwarded), the session's open GET stream ends, and bob's calls on the session answer -32002, as for a
// session that does not exist.
func TestUnshareDetachesStreamableHTTP(t *testing.T) {
	cwd := t.TempDir()
	g, _ := startWithUsers(t, "--workdir", cwd)
	sid := g.createSessionWith(as("ann"))
	g.request("PUT", "/v1/sessions/"+sid+"/shares/bob", []byte(`{"role":"collaborator"}`), as("ann"))
	bob := &httpACP{t: t, g: g, who: "bob"}
	resp, body := bob.post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	if resp.StatusCode != 200 {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	bob.conn = resp.Header.Get("Acp-Connection-Id")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn := bob.stream(ctx, "")
	sess := bob.stream(ctx, sid) // the answer to session/load comes on it, after the replay
	if resp, body := bob.post(sid, `{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"`+sid+`","cwd":"`+cwd+`","mcpServers":[]}}`); resp.StatusCode != 202 {
		t.Fatalf("session/load: %d %s", resp.StatusCode, body)
	}
	if l := lineWith(t, sess, `"id":1`); strings.Contains(l, `"error"`) {
		t.Fatalf("session/load: %s", l)
	}

	annWS := g.dialAs("/v1/sessions/"+sid+"/ws", as("ann"))
	annWS.waitFor("bob attached over HTTP", presenceIs(t, "ann:owner:1", "bob:collaborator:1"))

	if st, _, _ := g.request("DELETE", "/v1/sessions/"+sid+"/shares/bob", nil, as("ann")); st != 204 {
		t.Fatalf("unshare: %d", st)
	}
	// Detached: the connection no longer counts as watching (the writer stopped forwarding the log).
	annWS.waitFor("bob detached", afterPresence(t, "ann:owner:1", "bob:collaborator:1"))
	// The session's stream ends: nothing more will come on it (it did not before: it stayed open, quiet).
	streamEnds(t, sess)
	prompt := `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"hi"}]}}`
	resp, body = bob.post(sid, prompt)
	if resp.StatusCode == 202 { // the answer goes on the session's stream: opened again, it carries it
		body = lineWith(t, mergeLines(ctx, conn, bob.stream(ctx, sid)), `"id":2`)
	}
	if !strings.Contains(body, `"code":-32002`) {
		t.Fatalf("bob prompts after the unshare: %d %s, want -32002", resp.StatusCode, body)
	}
}

// streamEnds waits (bounded) for a stream to end, whatever lines come before.
func streamEnds(t *testing.T, ch <-chan string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the session's stream is still open")
		}
	}
}

// mergeLines reads two streams' lines as one until ctx ends.
func mergeLines(ctx context.Context, a, b <-chan string) <-chan string {
	out := make(chan string)
	for _, ch := range []<-chan string{a, b} {
		go func() {
			for l := range ch {
				select {
				case out <- l:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return out
}
