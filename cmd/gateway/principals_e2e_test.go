package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/acpws"
	"github.com/coder/websocket"
)

// ghostSession is a session id no gateway ever made.
const ghostSession = "00000000-0000-4000-8000-000000000000"

// problemOf is what a refusal says, with the session id it names made neutral: the answer to a session the
// caller may not see must be the answer to one that does not exist, word for word.
func problemOf(st int, code, body, id string) string {
	var p struct{ Detail string }
	_ = json.Unmarshal([]byte(body), &p)
	return itoa(st) + " " + code + " " + strings.ReplaceAll(p.Detail, id, "<id>")
}

// TestOwnershipOnEveryRoute: bob cannot see or touch ann's session through any route the router serves:
// each answers him exactly as for a session that does not exist. Ann (the owner) and root (an admin) get
// through. The routes come from the router itself: a route added later without a row here fails the test.
func TestOwnershipOnEveryRoute(t *testing.T) {
	g, _ := startWithUsers(t)
	ann, bob, root := as("ann"), as("bob"), as("root")
	sid := g.createSessionWith(ann)

	bodies := map[string]string{
		"POST /v1/sessions/{id}/prompt":                       `{"text":"hello"}`,
		"POST /v1/sessions/{id}/cancel":                       `{}`,
		"POST /v1/sessions/{id}/mode":                         `{"modeId":"ask"}`,
		"POST /v1/sessions/{id}/config":                       `{"configId":"x","value":"y"}`,
		"POST /v1/sessions/{id}/permissions/{permissionId}":   `{"optionId":"allow"}`,
		"POST /v1/sessions/{id}/elicitations/{elicitationId}": `{"action":"decline"}`,
		"PUT /v1/sessions/{id}/shares/{principal}":            `{"role":"viewer"}`,
		"PATCH /v1/sessions/{id}":                             `{"title":"renamed"}`,
	}
	// Routes that name no session, and what each must not leak.
	sessionless := map[string]func(){
		"GET /healthz": nil, "GET /readyz": nil, "GET /openapi.yaml": nil, "GET /v1/agents": nil,
		// The usage counters name principals and what each spent: a user reads none of it.
		"GET /metrics": func() {
			for who, want := range map[string]int{"ann": 403, "bob": 403, "root": 200} {
				if st, _, _ := g.request("GET", "/metrics", nil, as(who)); st != want {
					t.Errorf("GET /metrics as %s: %d, want %d", who, st, want)
				}
			}
		},
		"GET /acp": nil, "GET /acp/{agent}": nil, // the JSON-RPC table below
		// Terminal logins: TestTerminalLoginOverWebSocket (another's login is not found on every route).
		"POST /v1/agents/{agent}/login/terminal": nil, "GET /v1/agents/{agent}/login/terminal/{loginId}": nil,
		"DELETE /v1/agents/{agent}/login/terminal/{loginId}": nil, "GET /v1/agents/{agent}/login/terminal/{loginId}/callback/{port}/*": nil,
		// Streamable HTTP: TestOwnershipOverStreamableHTTP (another's connection id is unknown; its sessions are
		// not there).
		"POST /acp": nil, "DELETE /acp": nil, "POST /acp/{agent}": nil, "DELETE /acp/{agent}": nil,
		// Agent login: TestAgentLoginEnvVar, TestAgentLoginAgentMethod and TestAgentLoginShared (a login serves
		// only who supplied it; bob's state shows none of ann's; a shared one only an admin changes).
		"GET /v1/agents/{agent}/login": nil, "DELETE /v1/agents/{agent}/login": nil,
		"PUT /v1/agents/{agent}/login/env": nil, "POST /v1/agents/{agent}/login/agent": nil,
		"GET /v1/sessions": func() {
			for who, want := range map[string]bool{"ann": true, "bob": false, "root": true} {
				st, _, body := g.request("GET", "/v1/sessions", nil, as(who))
				if got := slices.Contains(listedIDs(t, body), sid); st != 200 || got != want {
					t.Errorf("GET /v1/sessions as %s: %d, lists ann's session: %v", who, st, got)
				}
			}
		},
		"POST /v1/sessions": func() {
			other := g.createSessionWith(bob)
			if st, code, _ := g.request("GET", "/v1/sessions/"+other, nil, ann); st != 404 || code != "session_not_found" {
				t.Errorf("ann sees the session bob created: %d %s", st, code)
			}
		},
		"GET /v1/me": func() { // each caller learns only who they are
			for _, who := range []string{"ann", "bob"} {
				st, _, body := g.request("GET", "/v1/me", nil, as(who))
				if st != 200 || !strings.Contains(body, `"id":"`+who+`"`) || strings.Contains(body, sid) {
					t.Errorf("GET /v1/me as %s: %d %s", who, st, body)
				}
			}
		},
		"GET /v1/nodes": func() { // any principal reads the nodes; no session of anyone is in it
			for _, who := range []string{"ann", "bob"} {
				st, _, body := g.request("GET", "/v1/nodes", nil, as(who))
				if st != 200 || !strings.Contains(body, `"nodes":[`) || strings.Contains(body, sid) {
					t.Errorf("GET /v1/nodes as %s: %d %s", who, st, body)
				}
			}
		},
		"GET /v1/workspace/dirs": func() { // any principal may pick a cwd under the roots; no session is in it
			for _, who := range []string{"ann", "bob"} {
				st, _, body := g.request("GET", "/v1/workspace/dirs", nil, as(who))
				if st != 200 || !strings.Contains(body, `"roots":[`) || strings.Contains(body, sid) {
					t.Errorf("GET /v1/workspace/dirs as %s: %d %s", who, st, body)
				}
			}
		},
		"POST /v1/ws-tickets": func() {
			st, code, body := g.request("POST", "/v1/ws-tickets", []byte(`{"sessionId":"`+sid+`"}`), bob)
			st2, code2, body2 := g.request("POST", "/v1/ws-tickets", []byte(`{"sessionId":"`+ghostSession+`"}`), bob)
			if a, b := problemOf(st, code, body, sid), problemOf(st2, code2, body2, ghostSession); a != b || st != 404 {
				t.Errorf("ticket for ann's session as bob: %s; for no session: %s", a, b)
			}
		},
	}
	var deleteRoute *routerRoute
	for _, rt := range routerRoutes(t) {
		key := rt.method + " " + rt.pattern
		if !strings.Contains(rt.pattern, "{id}") {
			check, known := sessionless[key]
			if !known {
				t.Errorf("route %s is not in the ownership table: add what it must not show to others", key)
			} else if check != nil {
				check()
			}
			continue
		}
		path := func(id string) string {
			return strings.NewReplacer("{id}", id, "{permissionId}", "no-such-permission", "{elicitationId}", "no-such-elicitation", "{principal}", "carol").Replace(rt.pattern)
		}
		if strings.HasSuffix(rt.pattern, "/ws") {
			for name, id := range map[string]string{"ann's session": sid, "no session": ghostSession} {
				if code := g.dialAs(path(id), bob).waitClosed(); code != 4004 {
					t.Errorf("%s as bob for %s: closed %d, want 4004", key, name, code)
				}
			}
			owner := g.dialAs(path(sid), ann)
			owner.waitFor("ann's own stream", func(f frame) bool { return f.Params.Meta.Gateway.Seq > 0 })
			owner.c.Close(websocket.StatusNormalClosure, "")
			continue
		}
		body := []byte(bodies[key])
		st, code, resp := g.request(rt.method, path(sid), body, bob)
		st2, code2, resp2 := g.request(rt.method, path(ghostSession), body, bob)
		if a, b := problemOf(st, code, resp, sid), problemOf(st2, code2, resp2, ghostSession); a != b || code != "session_not_found" {
			t.Errorf("%s as bob: ann's session answers %q, no session %q", key, a, b)
		}
		if key == "DELETE /v1/sessions/{id}" {
			deleteRoute = &rt
			continue // the owner's delete comes last
		}
		for name, hdr := range map[string]map[string]string{"ann": ann, "root": root} {
			if st, code, resp := g.request(rt.method, path(sid), body, hdr); code == "session_not_found" {
				t.Errorf("%s as %s (who may): %d %s", key, name, st, resp)
			}
		}
	}
	if deleteRoute == nil {
		t.Fatal("the router has no DELETE of a session")
	}
	if st, _, _ := g.request("GET", "/v1/sessions/"+sid, nil, ann); st != 200 {
		t.Fatalf("ann's session is gone after bob's attempts: %d", st)
	}
	if st, _, body := g.request("DELETE", "/v1/sessions/"+sid, nil, ann); st != 204 {
		t.Fatalf("ann deletes her session: %d %s", st, body)
	}
}

// TestOwnershipOnEveryACPMethod: over `/acp` bob gets -32002 for ann's session from every method that names
// one, exactly as for a session that does not exist, and session/list leaves it out; root (an admin) may
// load it. The methods come from the `/acp` method table: a method added later without a row fails the test.
func TestOwnershipOnEveryACPMethod(t *testing.T) {
	cwd := t.TempDir()
	g, _ := startWithUsers(t, "--workdir", cwd)
	sid := g.createSessionWith(as("ann"))
	bob := dialACPAs(t, g, as("bob"))
	withSession := map[string]func(id string) map[string]any{
		"session/load": func(id string) map[string]any {
			return map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}
		},
		"session/resume": func(id string) map[string]any {
			return map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}
		},
		"session/close":  func(id string) map[string]any { return map[string]any{"sessionId": id} },
		"session/delete": func(id string) map[string]any { return map[string]any{"sessionId": id} },
		"session/fork": func(id string) map[string]any {
			return map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}
		},
		"session/prompt": func(id string) map[string]any {
			return map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}
		},
		"session/set_mode": func(id string) map[string]any { return map[string]any{"sessionId": id, "modeId": "ask"} },
		"session/set_config_option": func(id string) map[string]any {
			return map[string]any{"sessionId": id, "configId": "x", "value": "y"}
		},
	}
	other := map[string]func(){
		"initialize":   nil, // asked by dialACPAs; names no session
		"authenticate": nil, // goes to the attached session's agent: bob can attach none of ann's
		"session/list": func() {
			if ids := sessionIDs(bob.call("session/list", map[string]any{}).Result); slices.Contains(ids, sid) {
				t.Errorf("session/list as bob lists ann's session: %v", ids)
			}
		},
		"session/new": func() {
			r := bob.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
			var res struct{ SessionID string }
			_ = json.Unmarshal(r.Result, &res)
			if st, code, _ := g.request("GET", "/v1/sessions/"+res.SessionID, nil, as("ann")); res.SessionID == "" || st != 404 || code != "session_not_found" {
				t.Errorf("ann sees the session bob made over /acp (%q): %d %s", res.SessionID, st, code)
			}
		},
	}
	for _, m := range acpws.MethodNames() {
		params, ok := withSession[m]
		if !ok {
			check, known := other[m]
			if !known {
				t.Errorf("method %s is not in the ownership table", m)
			} else if check != nil {
				check()
			}
			continue
		}
		got, ghost := bob.call(m, params(sid)), bob.call(m, params(ghostSession))
		if got.Error == nil || ghost.Error == nil {
			t.Errorf("%s as bob: ann's session %s, no session %s", m, got.Result, ghost.Result)
			continue
		}
		a := strings.ReplaceAll(itoa(got.Error.Code)+" "+got.Error.Message+" "+string(got.Error.Data), sid, "<id>")
		b := strings.ReplaceAll(itoa(ghost.Error.Code)+" "+ghost.Error.Message+" "+string(ghost.Error.Data), ghostSession, "<id>")
		if a != b || got.Error.Code != -32002 {
			t.Errorf("%s as bob: ann's session answers %q, no session %q", m, a, b)
		}
	}
	if st, _, _ := g.request("GET", "/v1/sessions/"+sid, nil, as("ann")); st != 200 {
		t.Fatalf("ann's session is gone after bob's attempts: %d", st)
	}
	root := dialACPAs(t, g, as("root"))
	if r := root.call("session/load", withSession["session/load"](sid)); r.Error != nil {
		t.Fatalf("root loads ann's session: %+v", r.Error)
	}
	if ids := sessionIDs(root.call("session/list", map[string]any{}).Result); !slices.Contains(ids, sid) {
		t.Fatalf("root's session/list misses ann's session: %v", ids)
	}
}
