package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// rawConn is a client connection driven by hand, so a test can be the slow or idle client the gateway must
// shed. Every read is bounded by a generous deadline: a gateway that never sheds fails the test, it does
// not hang it.
type rawConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func (g *gateway) rawDial() *rawConn {
	g.t.Helper()
	c, err := net.Dial("tcp", g.base[len("http://"):])
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { c.Close() })
	return &rawConn{t: g.t, c: c, r: bufio.NewReader(c)}
}

func (rc *rawConn) write(s string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, s); err != nil {
		rc.t.Fatal(err)
	}
}

// response reads one response and its problem code.
func (rc *rawConn) response() (*http.Response, string) {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(15 * time.Second))
	resp, err := http.ReadResponse(rc.r, nil)
	if err != nil {
		rc.t.Fatalf("reading a response: %v", err)
	}
	defer resp.Body.Close()
	var p struct{ Code string }
	_ = json.NewDecoder(resp.Body).Decode(&p)
	return resp, p.Code
}

// closedByPeer reports whether the gateway closed the connection (EOF or reset) before the deadline.
func (rc *rawConn) closedByPeer() bool {
	_ = rc.c.SetReadDeadline(time.Now().Add(15 * time.Second))
	_, err := rc.r.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestSlowBodyIsCutOff: a client that sends headers and then trickles (here: withholds) its body gets
// 408 body_timeout and loses the connection once --body-timeout has passed.
func TestSlowBodyIsCutOff(t *testing.T) {
	g := startGateway(t, "--body-timeout", "300ms", "--demo-delay", "200ms")
	c := g.rawDial()
	c.write("POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
	resp, code := c.response()
	if resp.StatusCode != http.StatusRequestTimeout || code != "body_timeout" {
		t.Fatalf("got %d %q, want 408 body_timeout", resp.StatusCode, code)
	}
	if !c.closedByPeer() {
		t.Fatal("the connection stayed open after the body timed out")
	}
	// A body that arrives in time still works, and waits that outlast the body timeout are not cut: the
	// deadline ends with the body. The demo agent's steps (--demo-delay, set below) make each wait — the
	// prompt's, up to the permission request, and the answer's, up to the turn's end — several times longer.
	s := g.createSession(nil)
	var asked struct {
		Status      string
		Permissions []struct{ ID string }
	}
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"hi"}`, &asked); code != 200 || asked.Status != "awaiting_permission" || len(asked.Permissions) != 1 {
		t.Fatalf("waiting prompt %d %+v", code, asked)
	}
	var ended struct{ Status, StopReason string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/permissions/"+asked.Permissions[0].ID+"?wait=true", `{"optionId":"allow-once"}`, &ended); code != 200 || ended.StopReason != "end_turn" {
		t.Fatalf("waiting answer %d %+v", code, ended)
	}
}

// TestIdleKeepAliveIsClosed: a keep-alive connection with no request on it is closed after
// --http-idle-timeout.
func TestIdleKeepAliveIsClosed(t *testing.T) {
	g := startGateway(t, "--http-idle-timeout", "300ms")
	c := g.rawDial()
	c.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if resp, _ := c.response(); resp.StatusCode != 200 {
		t.Fatalf("healthz %d", resp.StatusCode)
	}
	if !c.closedByPeer() {
		t.Fatal("the idle keep-alive connection was never closed")
	}
}

// TestUnauthenticatedConnectionCap fills --max-unauthenticated-conns with slowlorises (request line sent,
// headers never finished) while authenticated connections do not count: a burst of fresh clients is served
// while the slowlorises are young; once they have waited past the grace, a fresh client past the cap is served
// and the oldest slowloris is closed to make room for it.
func TestUnauthenticatedConnectionCap(t *testing.T) {
	g := startGateway(t, "--token", testToken, "--max-unauthenticated-conns", "2")
	// Two authenticated keep-alive connections stay open beside the cap.
	for range 2 {
		c := g.rawDial()
		c.write("GET /v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + testToken + "\r\n\r\n")
		if resp, _ := c.response(); resp.StatusCode != 200 {
			t.Fatalf("authenticated request %d", resp.StatusCode)
		}
	}
	var lorises []*rawConn
	for range 2 {
		c := g.rawDial()
		c.write("POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
		lorises = append(lorises, c)
		// The next dial must reach accept after this one: a request answered on a third connection proves it.
		probe := g.rawDial()
		probe.write("GET /v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + testToken + "\r\n\r\n")
		if resp, _ := probe.response(); resp.StatusCode != 200 {
			t.Fatalf("authenticated probe %d", resp.StatusCode)
		}
	}
	// A burst of fresh clients is no slowloris: while the oldest pending connection is younger than the grace
	// (1 s), new ones are served past the cap.
	// Two connect before either has sent its request (they are pending too); an answered request on a later
	// connection proves both were accepted. Neither is closed for the other (the probe, at twice the cap, may
	// close the oldest slowloris).
	burst := []*rawConn{g.rawDial(), g.rawDial()}
	probe := g.rawDial()
	probe.write("GET /v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + testToken + "\r\n\r\n")
	if resp, _ := probe.response(); resp.StatusCode != 200 {
		t.Fatalf("probe during the burst: %d", resp.StatusCode)
	}
	for i, c := range burst {
		c.write("GET /v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + testToken + "\r\nConnection: close\r\n\r\n")
		if resp, _ := c.response(); resp.StatusCode != 200 {
			t.Fatalf("burst client %d: %d", i, resp.StatusCode)
		}
	}
	<-time.After(1100 * time.Millisecond) // what is under test: the slowlorises outlive the grace
	fresh := g.rawDial()
	fresh.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	if resp, _ := fresh.response(); resp.StatusCode != 200 {
		t.Fatalf("healthz past the cap: %d", resp.StatusCode)
	}
	if !lorises[0].closedByPeer() {
		t.Fatal("the oldest slowloris kept its connection when a fresh client needed the room")
	}
	lorises[1].write("Authorization: Bearer " + testToken + "\r\nContent-Length: 2\r\n\r\n{}")
	if resp, _ := lorises[1].response(); resp.StatusCode != http.StatusCreated {
		t.Fatalf("the younger slowloris, finishing its request, got %d", resp.StatusCode)
	}
}

// TestUnreadResponsesDropConnection: a client that pipelines requests without ever reading the answers (so
// the gateway's writes block on a full socket) cannot hold a connection while it has not authenticated:
// each write must finish within --write-timeout, then the connection is closed.
func TestUnreadResponsesDropConnection(t *testing.T) {
	g := startGateway(t, "--token", testToken, "--max-unauthenticated-conns", "4", "--write-timeout", "300ms")
	c := g.rawDial()
	if tc, ok := c.c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4 << 10)
	}
	// Enough answers to fill any socket buffers: openapi.yaml is tens of KiB.
	done := make(chan error, 1)
	go func() {
		for range 2000 {
			if _, err := io.WriteString(c.c, "GET /openapi.yaml HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	// Wait for the gateway to give up on the connection: the requests it can no longer read fail to write.
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the gateway kept reading requests from a client that never reads")
	}
	_ = c.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := io.Copy(io.Discard, c.c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the connection of a client that never reads stayed open")
	}
}
