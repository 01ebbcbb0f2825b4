package acpws

import "testing"

// A session closed elsewhere (REST DELETE, the reaper) ends its Streamable HTTP session stream once its last
// frames are written: a client waiting on it must not wait on a quiet stream forever. The connection's own
// stream stays open.
func TestHTTPClosedSessionEndsItsStream(t *testing.T) {
	e := newEnv(t, Options{})
	cl, conn, sid, sess := newHTTPSession(t, e, map[string]any{})
	s, err := e.reg.Get(sid)
	if err != nil {
		t.Fatal(err)
	}
	s.Close("deleted by the test")
	sess.ended()
	id := cl.request("session/list", map[string]any{}, "")
	if _, resp := conn.until(id, nil); resp.Error != nil {
		t.Fatalf("the connection's stream after the close: %s", resp.raw)
	}
}

// The client's own session/close is answered on the session stream before that stream ends: the official
// client fails the requests in flight on a stream that ends.
func TestHTTPSessionCloseAnsweredBeforeItsStreamEnds(t *testing.T) {
	for range 20 { // the answer and the log's end race inside the gateway: give each order its chance
		e := newEnv(t, Options{})
		cl, _, sid, sess := newHTTPSession(t, e, map[string]any{})
		id := cl.request("session/close", map[string]any{"sessionId": sid}, sid)
		if _, resp := sess.until(id, nil); resp.Error != nil {
			t.Fatalf("session/close: %s", resp.raw)
		}
		sess.ended()
	}
}

// A prompt in flight when its session is closed elsewhere gets its answer on the session stream before the
// stream ends.
func TestHTTPPromptInFlightAnsweredBeforeClosedStreamEnds(t *testing.T) {
	e := newEnv(t, Options{})
	cl, _, sid, sess := newHTTPSession(t, e, map[string]any{})
	id := cl.request("session/prompt", textPrompt(sid, "closed mid-turn"), sid)
	for {
		if m := sess.next(); m.Method == "session/request_permission" {
			break // the turn waits on the client: the prompt's answer is due
		}
	}
	s, err := e.reg.Get(sid)
	if err != nil {
		t.Fatal(err)
	}
	s.Close("deleted by the test")
	if _, resp := sess.until(id, nil); resp.Error == nil && resp.Result == nil {
		t.Fatalf("session/prompt: %s", resp.raw)
	}
	sess.ended()
}
