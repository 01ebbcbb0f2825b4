package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// forkAgents are the flags of the fork and delete tests: the workdir wd and agents that are the test agent
// in echo mode (each prompt's answer names the agent session it ran in, with -record): "fa" advertises
// session/fork and session/delete and leaves a file in rec for each; "plain" advertises neither; "stub"
// forks but never ends a turn. rec is inside wd: a confined agent writes nowhere else.
func forkAgents(t *testing.T, wd string) (args []string, rec string) {
	t.Helper()
	bin, rec := testAgentBinary(t), filepath.Join(wd, "rec")
	if err := os.Mkdir(rec, 0o700); err != nil {
		t.Fatal(err)
	}
	return []string{
		"--workdir", wd,
		"--agent", "fa=" + bin + " -mode echo -fork -delete -record " + rec,
		"--agent", "plain=" + bin + " -mode echo -record " + rec,
		"--agent", "stub=" + bin + " -mode stubborn -fork",
		"--default-agent", "fa",
	}, rec
}

var agentSessionRE = regexp.MustCompile(`agent session (\S+)`)

// promptText prompts sid as hdr and returns the turn's text.
func promptText(t *testing.T, g *gateway, sid, text string, hdr map[string]string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"text": text})
	st, _, resp := g.request("POST", "/v1/sessions/"+sid+"/prompt?wait=true", body, hdr)
	var res struct{ Text string }
	if st != 200 || json.Unmarshal([]byte(resp), &res) != nil {
		t.Fatalf("prompt %s: %d %s", sid, st, resp)
	}
	return res.Text
}

// agentSessionOf is the agent session a prompt's echo ran in.
func agentSessionOf(t *testing.T, text string) string {
	t.Helper()
	m := agentSessionRE.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no agent session in %q", text)
	}
	return m[1]
}

func recorded(rec, name string) bool {
	_, err := os.Stat(filepath.Join(rec, name))
	return err == nil
}

// snapshotOf is the snapshot of sid's detail as hdr sees it.
func snapshotOf(t *testing.T, g *gateway, sid string, hdr map[string]string) string {
	t.Helper()
	st, _, body := g.request("GET", "/v1/sessions/"+sid, nil, hdr)
	var d struct{ Snapshot json.RawMessage }
	if st != 200 || json.Unmarshal([]byte(body), &d) != nil {
		t.Fatalf("GET %s: %d %s", sid, st, body)
	}
	return string(d.Snapshot)
}

// TestForkREST: POST /v1/sessions/{id}/fork makes a session owned by the caller whose transcript starts with
// the source's and whose agent is the agent's fork of the source's agent session (a real agent process that
// records the fork); the two go on independently. A viewer may neither fork nor delete; an agent without
// session/fork is 422 fork_unsupported; a fork during a turn is 409 turn_running.
func TestForkREST(t *testing.T) {
	args, rec := forkAgents(t, t.TempDir())
	g, _ := startWithUsers(t, args...)
	ann, bob := as("ann"), as("bob")
	src := g.createSessionWith(ann)
	srcAgent := agentSessionOf(t, promptText(t, g, src, "the first question", ann))

	st, _, body := g.request("POST", "/v1/sessions/"+src+"/fork", nil, ann)
	var fork sessionJSON
	if st != 201 || json.Unmarshal([]byte(body), &fork) != nil || fork.ID == src || fork.Agent != "fa" {
		t.Fatalf("fork: %d %s", st, body)
	}
	if snap := snapshotOf(t, g, fork.ID, ann); !strings.Contains(snap, "the first question") || !strings.Contains(snap, "agent session "+srcAgent) {
		t.Fatalf("the fork's snapshot lacks the source's turn: %s", snap)
	}
	text := promptText(t, g, fork.ID, "asked in the fork", ann)
	forkAgent := agentSessionOf(t, text)
	if !strings.HasPrefix(forkAgent, srcAgent+"-fork-") || !strings.Contains(text, "forked from "+srcAgent+"\n") {
		t.Fatalf("the fork's turn ran in agent session %q: %q", forkAgent, text)
	}
	if !recorded(rec, "forked-"+srcAgent+"-as-"+forkAgent) {
		t.Fatalf("the agent recorded no session/fork of %s", srcAgent)
	}
	if snap := snapshotOf(t, g, src, ann); strings.Contains(snap, "asked in the fork") {
		t.Fatalf("the fork's turn shows in the source: %s", snap)
	}
	if st, code, body := g.request("GET", "/v1/sessions/"+fork.ID, nil, bob); st != 404 || code != "session_not_found" {
		t.Fatalf("bob sees ann's fork: %d %s", st, body)
	}

	// Bob, a viewer of the source, observes it only.
	if st, _, body := g.request("PUT", "/v1/sessions/"+src+"/shares/bob", []byte(`{"role":"viewer"}`), ann); st != 200 {
		t.Fatalf("share: %d %s", st, body)
	}
	if st, code, body := g.request("POST", "/v1/sessions/"+src+"/fork", nil, bob); st != 403 || code != "forbidden" {
		t.Errorf("a viewer forks: %d %s", st, body)
	}
	if st, code, body := g.request("DELETE", "/v1/sessions/"+src+"?agent=delete", nil, bob); st != 403 || code != "forbidden" {
		t.Errorf("a viewer deletes: %d %s", st, body)
	}
	if r := dialACPAs(t, g, bob).call("session/delete", map[string]any{"sessionId": src}); r.Error == nil || r.Error.Code != -32003 {
		t.Errorf("a viewer deletes over /acp: %+v", r)
	}

	plain := createOn(t, g, "plain", ann)
	if st, code, body := g.request("POST", "/v1/sessions/"+plain+"/fork", nil, ann); st != 422 || code != "fork_unsupported" {
		t.Errorf("fork of an agent without session/fork: %d %s", st, body)
	}
	stub := createOn(t, g, "stub", ann)
	if st, _, body := g.request("POST", "/v1/sessions/"+stub+"/prompt", []byte(`{"text":"run"}`), ann); st != 202 {
		t.Fatalf("stubborn prompt: %d %s", st, body)
	}
	if st, code, body := g.request("POST", "/v1/sessions/"+stub+"/fork", nil, ann); st != 409 || code != "turn_running" {
		t.Errorf("fork during a turn: %d %s", st, body)
	}
	if st, code, body := g.request("POST", "/v1/sessions/"+src+"/fork", []byte(`{"cwd":"/"}`), ann); st != 403 || code != "forbidden_cwd" {
		t.Errorf("fork into a cwd outside the roots: %d %s", st, body)
	}
}

// callCollect is call, also returning the notifications and requests that came before the answer.
func (rc *rpcClient) callCollect(method string, params any) (rpcReply, []string) {
	rc.t.Helper()
	rc.next++
	id := rc.next
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err := rc.c.Write(ctx, websocket.MessageText, req); err != nil {
		rc.t.Fatalf("%s: write: %v", method, err)
	}
	var seen []string
	for {
		_, data, err := rc.c.Read(ctx)
		if err != nil {
			rc.t.Fatalf("%s: read: %v", method, err)
		}
		var m struct {
			ID     *int    `json:"id"`
			Method *string `json:"method"`
			rpcReply
		}
		if json.Unmarshal(data, &m) == nil && m.ID != nil && m.Method == nil && *m.ID == id {
			return m.rpcReply, seen
		}
		seen = append(seen, string(data))
	}
}

// createOn creates a session of agent as hdr.
func createOn(t *testing.T, g *gateway, agent string, hdr map[string]string) string {
	t.Helper()
	st, _, body := g.request("POST", "/v1/sessions", []byte(`{"agent":"`+agent+`"}`), hdr)
	var s sessionJSON
	if st != 201 || json.Unmarshal([]byte(body), &s) != nil {
		t.Fatalf("create on %s: %d %s", agent, st, body)
	}
	return s.ID
}

// TestDeleteReachesAgent: DELETE /v1/sessions/{id}?agent=delete removes the session and has the agent
// delete its own copy (the agent records the session/delete); without the parameter the agent's copy stays,
// as before; an agent without session/delete is reported as such. The session is 404 afterwards.
func TestDeleteReachesAgent(t *testing.T) {
	args, rec := forkAgents(t, t.TempDir())
	g, _ := startWithUsers(t, args...)
	ann := as("ann")
	a := g.createSessionWith(ann)
	aAgent := agentSessionOf(t, promptText(t, g, a, "hello", ann))
	if st, code, body := g.request("DELETE", "/v1/sessions/"+a+"?agent=yes", nil, ann); st != 400 || code != "bad_request" {
		t.Fatalf("agent=yes: %d %s", st, body)
	}
	st, _, body := g.request("DELETE", "/v1/sessions/"+a+"?agent=delete", nil, ann)
	if st != 200 || !strings.Contains(body, `"agentSession":{"status":"deleted"}`) {
		t.Fatalf("delete with the agent's copy: %d %s", st, body)
	}
	if !recorded(rec, "deleted-"+aAgent) {
		t.Fatalf("the agent recorded no session/delete of %s", aAgent)
	}
	if st, code, _ := g.request("GET", "/v1/sessions/"+a, nil, ann); st != 404 || code != "session_not_found" {
		t.Fatalf("a deleted session: %d %s", st, code)
	}
	if st, code, _ := g.request("DELETE", "/v1/sessions/"+a+"?agent=delete", nil, ann); st != 404 || code != "session_not_found" {
		t.Fatalf("deleting it again: %d %s", st, code)
	}

	b := g.createSessionWith(ann)
	bAgent := agentSessionOf(t, promptText(t, g, b, "hello", ann))
	if st, _, body := g.request("DELETE", "/v1/sessions/"+b, nil, ann); st != 204 {
		t.Fatalf("plain delete: %d %s", st, body)
	}
	if recorded(rec, "deleted-"+bAgent) {
		t.Fatalf("a DELETE without agent=delete deleted the agent's copy")
	}

	p := createOn(t, g, "plain", ann)
	if st, _, body := g.request("DELETE", "/v1/sessions/"+p+"?agent=delete", nil, ann); st != 200 || !strings.Contains(body, `"status":"unsupported"`) {
		t.Fatalf("delete on an agent without session/delete: %d %s", st, body)
	}
}

// TestForkAndDeleteOverACP: /acp advertises fork where the agent does and delete always; session/fork
// answers a new session whose turns run in the agent's fork, session/delete reaches the agent and the
// session is gone from every face; an agent without fork answers -32601.
func TestForkAndDeleteOverACP(t *testing.T) {
	cwd := t.TempDir()
	args, rec := forkAgents(t, cwd)
	g, _ := startWithUsers(t, args...)
	ann := as("ann")
	c := dialACPAs(t, g, ann)
	src := c.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	var made struct{ SessionID string }
	if src.Error != nil || json.Unmarshal(src.Result, &made) != nil {
		t.Fatalf("session/new: %+v", src)
	}
	srcAgent := agentSessionOf(t, promptText(t, g, made.SessionID, "over rest first", ann))

	r := c.call("session/fork", map[string]any{"sessionId": made.SessionID, "cwd": cwd, "mcpServers": []any{}})
	var forked struct{ SessionID string }
	if r.Error != nil || json.Unmarshal(r.Result, &forked) != nil || forked.SessionID == "" || forked.SessionID == made.SessionID {
		t.Fatalf("session/fork: %+v %s", r.Error, r.Result)
	}
	if snap := snapshotOf(t, g, forked.SessionID, ann); !strings.Contains(snap, "over rest first") {
		t.Fatalf("the fork's snapshot lacks the source's turn: %s", snap)
	}
	// The socket gets the fork's own frames, not the history it inherited (the client has that).
	p, seen := c.callCollect("session/prompt", map[string]any{"sessionId": forked.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "in the fork"}}})
	if p.Error != nil {
		t.Fatalf("prompt in the fork: %+v", p.Error)
	}
	all := strings.Join(seen, "\n")
	if strings.Contains(all, "over rest first") || !strings.Contains(all, "text 11 bytes") {
		t.Fatalf("what the fork's socket got during its prompt:\n%s", all)
	}
	text := promptText(t, g, forked.SessionID, "again", ann)
	forkAgent := agentSessionOf(t, text)
	if !strings.Contains(text, "forked from "+srcAgent+"\n") {
		t.Fatalf("the fork's turn: %q", text)
	}

	d := c.call("session/delete", map[string]any{"sessionId": forked.SessionID})
	if d.Error != nil || !strings.Contains(string(d.Result), `"agentSession":{"status":"deleted"}`) {
		t.Fatalf("session/delete: %+v %s", d.Error, d.Result)
	}
	if !recorded(rec, "deleted-"+forkAgent) {
		t.Fatalf("the agent recorded no session/delete of %s", forkAgent)
	}
	if st, _, _ := g.request("GET", "/v1/sessions/"+forked.SessionID, nil, ann); st != 404 {
		t.Fatalf("the deleted fork over REST: %d", st)
	}
	if d := c.call("session/delete", map[string]any{"sessionId": forked.SessionID}); d.Error == nil || d.Error.Code != -32002 {
		t.Fatalf("session/delete of a deleted session: %+v", d)
	}

	init := c.call("initialize", map[string]any{"protocolVersion": 1})
	if !strings.Contains(string(init.Result), `"fork":{}`) || !strings.Contains(string(init.Result), `"delete":{}`) {
		t.Fatalf("initialize of an agent with fork: %s", init.Result)
	}
	pc := dialACPPathAs(t, g, "/acp/plain", ann)
	init = pc.call("initialize", map[string]any{"protocolVersion": 1})
	if strings.Contains(string(init.Result), `"fork"`) || !strings.Contains(string(init.Result), `"delete":{}`) {
		t.Fatalf("initialize of an agent without fork: %s", init.Result)
	}
	ps := pc.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	var plain struct{ SessionID string }
	if ps.Error != nil || json.Unmarshal(ps.Result, &plain) != nil {
		t.Fatalf("plain session/new: %+v", ps)
	}
	if r := pc.call("session/fork", map[string]any{"sessionId": plain.SessionID, "cwd": cwd, "mcpServers": []any{}}); r.Error == nil || r.Error.Code != -32601 {
		t.Fatalf("session/fork on an agent without it: %+v", r)
	}
}

// TestForkSurvivesRestart: with --data-dir, a fork is stored like any session (its inherited transcript
// included) and a deleted session is not: after a restart the fork is listed with its history and the
// deleted source is 404. Deleting the restored fork (no agent running, none started in this process yet)
// starts one to delete the agent's copy.
func TestForkSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	args, rec := forkAgents(t, t.TempDir())
	args = append(args, "--data-dir", dir)
	g1 := startGateway(t, args...)
	src := g1.createSession(map[string]any{})
	promptText(t, g1, src.ID, "before the restart", nil)
	st, _, body := g1.request("POST", "/v1/sessions/"+src.ID+"/fork", []byte(`{}`), nil)
	var fork sessionJSON
	if st != 201 || json.Unmarshal([]byte(body), &fork) != nil {
		t.Fatalf("fork: %d %s", st, body)
	}
	forkAgent := agentSessionOf(t, promptText(t, g1, fork.ID, "in the fork", nil))
	if st, _, body := g1.request("DELETE", "/v1/sessions/"+src.ID+"?agent=delete", nil, nil); st != 200 {
		t.Fatalf("delete the source: %d %s", st, body)
	}
	if err := g1.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	g2 := startGateway(t, args...)
	var list struct{ Sessions []sessionJSON }
	if code := g2.do("GET", "/v1/sessions", nil, &list); code != 200 || len(list.Sessions) != 1 || list.Sessions[0].ID != fork.ID {
		t.Fatalf("listed after the restart: %d %+v", code, list)
	}
	if snap := snapshotOf(t, g2, fork.ID, nil); !strings.Contains(snap, "before the restart") {
		t.Fatalf("the fork's snapshot after the restart: %s", snap)
	}
	if st, _, _ := g2.request("GET", "/v1/sessions/"+src.ID, nil, nil); st != 404 {
		t.Fatalf("the deleted source after the restart: %d", st)
	}
	if st, _, body := g2.request("DELETE", "/v1/sessions/"+fork.ID+"?agent=delete", nil, nil); st != 200 || !strings.Contains(body, `"status":"deleted"`) {
		t.Fatalf("delete the restored fork: %d %s", st, body)
	}
	if !recorded(rec, "deleted-"+forkAgent) {
		t.Fatalf("the agent recorded no session/delete of %s", forkAgent)
	}
	if code := g2.do("GET", "/v1/sessions", nil, &list); code != 200 || len(list.Sessions) != 0 {
		t.Fatalf("listed after deleting the fork: %d %+v", code, list)
	}
}
