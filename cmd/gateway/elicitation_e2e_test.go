package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The elicit test agent asks a form (name and colour required, age an integer in 0..150, height a number,
// subscribe a boolean) or, prompted "url", a login URL; it reports the answer as "elicited <action> …".

func isElicitation(f frame) bool { return f.Method == "elicitation/create" }

func elicitationResolved(id string) func(f frame) bool {
	return func(f frame) bool {
		return f.Method == "_gateway/elicitation_resolved" && strings.Contains(string(f.Raw), `"requestId":"`+id+`"`)
	}
}

func frameID(t *testing.T, f frame) string {
	t.Helper()
	var id string
	if err := json.Unmarshal(f.ID, &id); err != nil {
		t.Fatalf("request id %s: %v", f.ID, err)
	}
	return id
}

type elicitationList struct {
	Elicitations []struct {
		ID              string          `json:"id"`
		TurnID          string          `json:"turnId"`
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
		URL             string          `json:"url"`
		ElicitationID   string          `json:"elicitationId"`
	} `json:"elicitations"`
}

// TestElicitationREST: `wait` stops at an elicitation (awaiting_elicitation), GET …/elicitations lists it
// with its schema, answers that do not match the schema are 400 invalid_elicitation_answer and leave it
// pending, the permissions route does not answer it, and a valid answer reaches the agent and ends the turn.
func TestElicitationREST(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "elicit")
	s := g.createSession(nil)
	var st struct {
		TurnID       string
		Status       string
		Elicitations []struct{ ID, Mode string }
	}
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"form"}`, &st); code != http.StatusOK || st.Status != "awaiting_elicitation" || len(st.Elicitations) != 1 {
		t.Fatalf("prompt?wait=true: %d %+v", code, st)
	}
	var list elicitationList
	if code := g.do("GET", "/v1/sessions/"+s.ID+"/elicitations", nil, &list); code != http.StatusOK || len(list.Elicitations) != 1 {
		t.Fatalf("list: %d %+v", code, list)
	}
	e := list.Elicitations[0]
	if e.ID != st.Elicitations[0].ID || e.Mode != "form" || e.Message != "Tell me about you" || e.TurnID != st.TurnID ||
		!strings.Contains(string(e.RequestedSchema), `"colour"`) {
		t.Fatalf("listed %+v", e)
	}
	path := "/v1/sessions/" + s.ID + "/elicitations/" + e.ID
	for _, bad := range []string{
		`{"action":"accept","content":{"colour":"green"}}`,                      // name is required
		`{"action":"accept","content":{"name":"Ann","colour":"pink"}}`,          // not one of the choices
		`{"action":"accept","content":{"name":"Ann","colour":"red","age":1.5}}`, // not an integer
		`{"action":"accept","content":{"name":"Ann","colour":"red","age":200}}`, // above the maximum
		`{"action":"accept","content":{"name":"Ann","colour":"red","x":1}}`,     // not in the schema
		`{"action":"accept","content":{"name":"","colour":"red"}}`,              // below minLength
		`{"action":"maybe"}`,
	} {
		var p problemJSON
		if code := g.do("POST", path, bad, &p); code != http.StatusBadRequest || p.Code != "invalid_elicitation_answer" {
			t.Errorf("answer %s: %d %+v", bad, code, p)
		}
	}
	var p problemJSON
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/permissions/"+e.ID, `{"outcome":"cancelled"}`, &p); code != http.StatusNotFound || p.Code != "permission_not_found" {
		t.Fatalf("answered through the permissions route: %d %+v", code, p)
	}
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/elicitations/nope", `{"action":"decline"}`, &p); code != http.StatusNotFound || p.Code != "elicitation_not_found" {
		t.Fatalf("unknown id: %d %+v", code, p)
	}
	var done struct {
		ID      string
		Outcome struct {
			Action  string
			Content map[string]any
		}
		Status, StopReason, Text string
	}
	good := `{"action":"accept","content":{"name":"Ann","colour":"red","age":42,"height":1.6,"subscribe":false}}`
	if code := g.do("POST", path+"?wait=true", good, &done); code != http.StatusOK || done.Outcome.Action != "accept" || done.Status != "ended" {
		t.Fatalf("valid answer: %d %+v", code, done)
	}
	if want := `elicited accept {"age":42,"colour":"red","height":1.6,"name":"Ann","subscribe":false}`; done.Text != want {
		t.Fatalf("the agent got %q, want %q", done.Text, want)
	}
	if code := g.do("POST", path, good, &p); code != http.StatusConflict || p.Code != "already_resolved" {
		t.Fatalf("second answer: %d %+v", code, p)
	}
}

// TestElicitationWebSocket: the request reaches a session socket as `elicitation/create` with the gateway's
// id; a bad answer gets -32602 and leaves it pending; a good one resolves it for every client.
func TestElicitationWebSocket(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "elicit")
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"form"}`, &started)
	req, _ := w.waitFor("elicitation", isElicitation)
	id := frameID(t, req)
	if req.Params.SessionID != s.ID || !strings.Contains(string(req.Raw), `"requestedSchema"`) {
		t.Fatalf("request frame %s", req.Raw)
	}
	w.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"action": "accept", "content": map[string]any{"name": 7, "colour": "red"}}})
	reply, _ := w.waitFor("error reply", func(f frame) bool { return string(f.ID) == `"`+id+`"` && f.Error != nil })
	if reply.Error.Code != -32602 {
		t.Fatalf("bad answer: %s", reply.Raw)
	}
	w.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"action": "accept", "content": map[string]any{"name": "Bob", "colour": "blue"}}})
	res, _ := w.waitFor("resolved", elicitationResolved(id))
	if !strings.Contains(string(res.Raw), `"by":"client"`) || !strings.Contains(string(res.Raw), `"action":"accept"`) {
		t.Fatalf("resolved %s", res.Raw)
	}
	w.waitFor("turn_ended", turnEnded(started.TurnID))
	var text struct{ Text string }
	g.do("GET", "/v1/sessions/"+s.ID+"/turn", nil, &text)
	if text.Text != `elicited accept {"colour":"blue","name":"Bob"}` {
		t.Fatalf("the agent got %q", text.Text)
	}
}

// TestElicitationURLComplete: a url elicitation is accepted without content, and the agent's
// `elicitation/complete` reaches clients with the gateway's session id.
func TestElicitationURLComplete(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "elicit")
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	sse := g.openSSE(t, "/v1/sessions/"+s.ID+"/events", nil)
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"url"}`, nil)
	req, _ := w.waitFor("elicitation", isElicitation)
	if !strings.Contains(string(req.Raw), `"url":"https://login.example.com/device?code=ABCD"`) || !strings.Contains(string(req.Raw), `"elicitationId":"login-1"`) {
		t.Fatalf("request frame %s", req.Raw)
	}
	var p problemJSON
	path := "/v1/sessions/" + s.ID + "/elicitations/" + frameID(t, req)
	if code := g.do("POST", path, `{"action":"accept","content":{"x":1}}`, &p); code != http.StatusBadRequest || p.Code != "invalid_elicitation_answer" {
		t.Fatalf("url accepted with content: %d %+v", code, p)
	}
	if code := g.do("POST", path, `{"action":"accept"}`, nil); code != http.StatusOK {
		t.Fatalf("accept: %d", code)
	}
	done, _ := w.waitFor("elicitation/complete", func(f frame) bool { return f.Method == "elicitation/complete" })
	if done.Params.SessionID != s.ID || !strings.Contains(string(done.Raw), `"elicitationId":"login-1"`) {
		t.Fatalf("complete frame %s", done.Raw)
	}
	// The event stream carries the same frames, request and completion.
	var methods []string
	for len(methods) == 0 || methods[len(methods)-1] != "elicitation/complete" {
		select {
		case ev, ok := <-sse.ch:
			if !ok {
				t.Fatalf("event stream ended after %v", methods)
			}
			var f frame
			if json.Unmarshal(ev.Data, &f) == nil && strings.HasPrefix(f.Method, "elicitation/") {
				methods = append(methods, f.Method)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("event stream: only %v", methods)
		}
	}
	if strings.Join(methods, " ") != "elicitation/create elicitation/complete" {
		t.Fatalf("event stream: %v", methods)
	}
}

// TestElicitationCancelDeclines: cancelling the turn declines its pending elicitation (by "cancel"), closing
// the session declines one (by "close"), and the deadline (--permission-timeout) declines one nobody answers.
func TestElicitationCancelDeclines(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "elicit")
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"form"}`, &started)
	req, _ := w.waitFor("elicitation", isElicitation)
	g.do("POST", "/v1/sessions/"+s.ID+"/cancel", nil, nil)
	res, _ := w.waitFor("resolved", elicitationResolved(frameID(t, req)))
	if !strings.Contains(string(res.Raw), `"by":"cancel"`) || !strings.Contains(string(res.Raw), `"action":"decline"`) {
		t.Fatalf("resolved %s", res.Raw)
	}
	w.waitFor("turn_ended", turnEnded(started.TurnID))

	// Closing the session declines what is pending (by "close") before the session says closed.
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"form"}`, nil)
	req3, _ := w.waitFor("the next elicitation", func(f frame) bool { return isElicitation(f) && frameID(t, f) != frameID(t, req) })
	if code := g.do("DELETE", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusNoContent {
		t.Fatalf("close: %d", code)
	}
	res3, _ := w.waitFor("resolved on close", elicitationResolved(frameID(t, req3)))
	if !strings.Contains(string(res3.Raw), `"by":"close"`) || !strings.Contains(string(res3.Raw), `"action":"decline"`) {
		t.Fatalf("resolved %s", res3.Raw)
	}

	g2, _ := testAgentGateway(t, "elicit", "--permission-timeout", "200ms")
	s2 := g2.createSession(nil)
	w2 := g2.dial("/v1/sessions/" + s2.ID + "/ws")
	g2.do("POST", "/v1/sessions/"+s2.ID+"/prompt", `{"text":"form"}`, &started)
	req2, _ := w2.waitFor("elicitation", isElicitation)
	res2, _ := w2.waitFor("resolved", elicitationResolved(frameID(t, req2)))
	if !strings.Contains(string(res2.Raw), `"by":"deadline"`) || !strings.Contains(string(res2.Raw), `"action":"decline"`) {
		t.Fatalf("resolved %s", res2.Raw)
	}
	w2.waitFor("turn_ended", turnEnded(started.TurnID))
	var st struct{ Text string }
	g2.do("GET", "/v1/sessions/"+s2.ID+"/turn", nil, &st)
	if st.Text != "elicited decline" {
		t.Fatalf("after the deadline the agent got %q", st.Text)
	}
}

// TestElicitationACPDelegation: an `/acp` client that advertised form elicitation is asked the form and its
// answer reaches the agent; one that advertised only form never sees a url elicitation, which REST answers.
func TestElicitationACPDelegation(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "elicit")
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	acp := g.dial("/acp")
	acp.send(json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"elicitation":{"form":{},"url":null}}}}`))
	acp.waitFor("initialize answer", func(f frame) bool { return string(f.ID) == "1" })
	acp.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/resume", "params": map[string]any{"sessionId": s.ID}})
	acp.waitFor("resume answer", func(f frame) bool { return string(f.ID) == "2" })
	prompt := func(id int, text string) {
		acp.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": map[string]any{
			"sessionId": s.ID, "prompt": []any{map[string]any{"type": "text", "text": text}}}})
	}
	prompt(3, "form")
	req, _ := acp.waitFor("elicitation on /acp", isElicitation)
	acp.send(map[string]any{"jsonrpc": "2.0", "id": frameID(t, req), "result": map[string]any{"action": "accept", "content": map[string]any{"name": "Cy", "colour": "green"}}})
	acp.waitFor("prompt answer", func(f frame) bool { return string(f.ID) == "3" })
	var turn struct{ Text string }
	g.do("GET", "/v1/sessions/"+s.ID+"/turn", nil, &turn)
	if turn.Text != `elicited accept {"colour":"green","name":"Cy"}` {
		t.Fatalf("the agent got %q", turn.Text)
	}

	prompt(4, "url")
	urlReq, _ := w.waitFor("url elicitation", func(f frame) bool { return isElicitation(f) && strings.Contains(string(f.Raw), `"mode":"url"`) })
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/elicitations/"+frameID(t, urlReq), `{"action":"decline"}`, nil); code != http.StatusOK {
		t.Fatalf("decline over REST: %d", code)
	}
	_, at := acp.waitFor("url prompt answer", func(f frame) bool { return string(f.ID) == "4" })
	for _, f := range acp.snapshot()[:at] {
		if isElicitation(f) && strings.Contains(string(f.Raw), `"mode":"url"`) {
			t.Fatalf("a client without url elicitation was asked: %s", f.Raw)
		}
	}
}

// TestElicitationViewerCannotAnswer: answering an elicitation needs the rights of answering a permission: a
// viewer sees the question but is refused over REST (403 forbidden) and on the socket (-32003); the owner's
// answer then reaches the agent.
func TestElicitationViewerCannotAnswer(t *testing.T) {
	t.Parallel()
	g, _ := startWithUsers(t, "--agent", "ta="+testAgentBinary(t)+" -mode elicit", "--default-agent", "ta")
	ann, bob := as("ann"), as("bob")
	sid := g.createSessionWith(ann)
	if st, _, body := g.request("PUT", "/v1/sessions/"+sid+"/shares/bob", []byte(`{"role":"viewer"}`), ann); st != http.StatusOK {
		t.Fatalf("share: %d %s", st, body)
	}
	bobWS := g.dialAs("/v1/sessions/"+sid+"/ws", bob)
	if st, _, body := g.request("POST", "/v1/sessions/"+sid+"/prompt", []byte(`{"text":"form"}`), ann); st != http.StatusAccepted {
		t.Fatalf("prompt: %d %s", st, body)
	}
	req, _ := bobWS.waitFor("the elicitation on the viewer's socket", isElicitation)
	id := frameID(t, req)
	if st, code, _ := g.request("GET", "/v1/sessions/"+sid+"/elicitations", nil, bob); st != http.StatusOK {
		t.Fatalf("viewer lists: %d %s", st, code)
	}
	answer := `{"action":"accept","content":{"name":"Bob","colour":"red"}}`
	if st, code, _ := g.request("POST", "/v1/sessions/"+sid+"/elicitations/"+id, []byte(answer), bob); st != http.StatusForbidden || code != "forbidden" {
		t.Fatalf("viewer answers: %d %s", st, code)
	}
	bobWS.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"action": "decline"}})
	bobWS.waitFor("the viewer's answer refused on the socket", func(f frame) bool { return f.Error != nil && f.Error.Code == -32003 })
	if st, code, _ := g.request("POST", "/v1/sessions/"+sid+"/elicitations/"+id+"?wait=true", []byte(`{"action":"accept","content":{"name":"Ann","colour":"red"}}`), ann); st != http.StatusOK {
		t.Fatalf("owner answers: %d %s", st, code)
	}
	_, _, body := g.request("GET", "/v1/sessions/"+sid+"/turn", nil, ann)
	if !strings.Contains(body, `elicited accept {\"colour\":\"red\",\"name\":\"Ann\"}`) {
		t.Fatalf("turn %s", body)
	}
}

// TestElicitationKill9: the gateway is killed while an elicitation waits for a user. Restarted on its data
// dir, it folds the logged `elicitation/create` as pending and then declines it with the restart's closing
// frames (`by: restart`), so no client is left with a question nobody can answer.
func TestElicitationKill9(t *testing.T) {
	dir, workdir := t.TempDir(), t.TempDir()
	agent := "ta=" + testAgentBinary(t) + " -mode elicit"
	g1, child, exited := startChildGateway(t, "--data-dir", dir, "--workdir", workdir, "--agent", agent, "--default-agent", "ta")
	s := g1.createSession(map[string]any{})
	live := g1.dial("/v1/sessions/" + s.ID + "/ws")
	g1.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"form"}`, nil)
	req, _ := live.waitFor("the elicitation", isElicitation)
	waitDurableSeq(t, g1, s.ID, req.Params.Meta.Gateway.Seq)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited

	g2 := startGateway(t, "--data-dir", dir, "--workdir", workdir, "--agent", agent, "--default-agent", "ta")
	var v struct {
		Status              string
		LastSeq             uint64
		PendingElicitations []any
	}
	if code := g2.do("GET", "/v1/sessions/"+s.ID, nil, &v); code != http.StatusOK || v.Status != "detached" || len(v.PendingElicitations) != 0 {
		t.Fatalf("after the restart: %d %+v", code, v)
	}
	all := g2.dial("/v1/sessions/" + s.ID + "/ws")
	res, _ := all.waitFor("the restart's decline", elicitationResolved(frameID(t, req)))
	if !strings.Contains(string(res.Raw), `"by":"restart"`) || !strings.Contains(string(res.Raw), `"action":"decline"`) {
		t.Fatalf("resolved %s", res.Raw)
	}
}

// waitDurableSeq polls the session's durableSeq until the store holds seq (the store writes behind).
func waitDurableSeq(t *testing.T, g *gateway, id string, seq uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var v struct{ DurableSeq uint64 }
		g.do("GET", "/v1/sessions/"+id, nil, &v)
		if v.DurableSeq >= seq {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("durableSeq %d never reached %d", v.DurableSeq, seq)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation: the condition is re-checked
	}
}
