package acpws

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// hclient is a Streamable HTTP ACP client for tests: it POSTs messages and reads the SSE streams it opens.
type hclient struct {
	t      testing.TB
	url    string // http://host/acp…
	conn   string // Acp-Connection-Id
	nextID int
}

// hresp is a response read whole.
type hresp struct {
	status int
	header http.Header
	body   []byte
}

// problemCode is the `code` of a problem+json body ("" otherwise).
func (r hresp) problemCode() string {
	var p struct{ Code string }
	_ = json.Unmarshal(r.body, &p)
	return p.Code
}

// do sends one request with the given headers (Content-Type application/json when body is not nil).
func doHTTP(t testing.TB, method, url string, body []byte, headers map[string]string) hresp {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return hresp{status: res.StatusCode, header: res.Header, body: b}
}

// httpInit opens a connection on path with initialize and returns the client and the initialize answer.
func (e *env) httpInit(path string, caps map[string]any) (*hclient, msg) {
	e.t.Helper()
	cl := &hclient{t: e.t, url: e.srv.URL + path}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{"protocolVersion": 1, "clientCapabilities": caps}})
	r := doHTTP(e.t, "POST", cl.url, b, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	cl.conn = r.header.Get("Acp-Connection-Id")
	if cl.conn == "" {
		e.t.Fatal("initialize: no Acp-Connection-Id")
	}
	var m msg
	if err := json.Unmarshal(r.body, &m); err != nil {
		e.t.Fatalf("initialize: %s: %v", r.body, err)
	}
	m.raw = r.body
	return cl, m
}

// post sends one message on the connection, naming session in Acp-Session-Id when not "".
func (cl *hclient) post(v any, session string) hresp {
	cl.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		cl.t.Fatal(err)
	}
	h := map[string]string{"Acp-Connection-Id": cl.conn}
	if session != "" {
		h["Acp-Session-Id"] = session
	}
	return doHTTP(cl.t, "POST", cl.url, b, h)
}

// request POSTs a request (which must be accepted with 202) and returns its id.
func (cl *hclient) request(method string, params any, session string) json.RawMessage {
	cl.t.Helper()
	cl.nextID++
	r := cl.post(map[string]any{"jsonrpc": "2.0", "id": cl.nextID, "method": method, "params": params}, session)
	if r.status != http.StatusAccepted {
		cl.t.Fatalf("%s: %d %s", method, r.status, r.body)
	}
	id, _ := json.Marshal(cl.nextID)
	return id
}

func (cl *hclient) answer(m msg, optionID, session string) {
	cl.t.Helper()
	r := cl.post(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": optionID}}}, session)
	if r.status != http.StatusAccepted {
		cl.t.Fatalf("answer: %d %s", r.status, r.body)
	}
}

// sse is one open SSE stream, read on its own goroutine until the stream ends or close is called.
type sse struct {
	t      testing.TB
	msgs   chan msg      // events, in order; closed when the stream ends
	cancel func()        // ends the GET
	done   chan struct{} // closed when the reader has returned
	once   sync.Once
}

// open GETs the stream of session ("" = the connection's); it fails the test unless the answer is 200. The
// stream is closed at cleanup.
func (cl *hclient) open(session string) *sse {
	cl.t.Helper()
	s, r := cl.tryOpen(session)
	if s == nil {
		cl.t.Fatalf("GET stream %q: %d %s", session, r.status, r.body)
	}
	return s
}

// tryOpen GETs a stream; not 200: the response, read whole.
func (cl *hclient) tryOpen(session string) (*sse, hresp) {
	cl.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", cl.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Acp-Connection-Id", cl.conn)
	if session != "" {
		req.Header.Set("Acp-Session-Id", session)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		cl.t.Fatalf("GET stream: %v", err)
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		return nil, hresp{status: res.StatusCode, header: res.Header, body: b}
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		cl.t.Errorf("stream Content-Type %q", ct)
	}
	s := &sse{t: cl.t, msgs: make(chan msg, 1024), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer close(s.msgs)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
		for sc.Scan() {
			line := sc.Text()
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue // blank separators and keep-alive comments
			}
			var m msg
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				s.t.Errorf("SSE event is not JSON: %q", data)
				return
			}
			m.raw = []byte(data)
			select {
			case s.msgs <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	cl.t.Cleanup(s.close)
	return s, hresp{status: 200}
}

// close ends the GET and waits for its reader.
func (s *sse) close() {
	s.once.Do(s.cancel)
	<-s.done
}

// next returns the next event; it fails the test when the stream ends or nothing comes in time.
func (s *sse) next() msg {
	s.t.Helper()
	m, ok := s.tryNext(stepTimeout)
	if !ok {
		s.t.Fatal("SSE stream ended or stayed silent")
	}
	return m
}

func (s *sse) tryNext(d time.Duration) (msg, bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case m, ok := <-s.msgs:
		return m, ok
	case <-timer.C:
		return msg{}, false
	}
}

// ended reads the stream to its end, failing the test if it does not end in time.
func (s *sse) ended() {
	s.t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for {
		if _, ok := s.tryNext(time.Until(deadline)); !ok {
			if time.Now().After(deadline) {
				s.t.Fatal("the stream did not end")
			}
			return
		}
	}
}

// until reads until the response with id, answering requests with onRequest (when not nil).
func (s *sse) until(id json.RawMessage, onRequest func(msg)) (before []msg, resp msg) {
	s.t.Helper()
	for {
		m := s.next()
		if m.isResponse() && string(m.ID) == string(id) {
			return before, m
		}
		if m.Method != "" && m.ID != nil && onRequest != nil {
			onRequest(m)
		}
		before = append(before, m)
	}
}
