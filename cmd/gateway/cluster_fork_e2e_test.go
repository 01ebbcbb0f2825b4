package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// clusterFork: a fork asked of a node that does not own the session is made by the owner (its agent forks
// the agent session there) and served everywhere, with the source's history; a fork of a session whose agent
// cannot fork is refused with the owner's code; a delete through another node removes the session.
func clusterFork(t *testing.T, gws []*gateway) {
	a, b, c := gws[0], gws[1], gws[2]
	s := a.createSession(map[string]any{"agent": "fa"})
	var res struct{ Text string }
	if code := a.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"asked on a"}`, &res); code != http.StatusOK {
		t.Fatalf("prompt on a: %d %+v", code, res)
	}
	var fork struct{ ID, Node, Agent string }
	if code := b.do("POST", "/v1/sessions/"+s.ID+"/fork", nil, &fork); code != http.StatusCreated || fork.Node != "a" || fork.Agent != "fa" {
		t.Fatalf("fork through b: %d %+v", code, fork)
	}
	var d struct{ Snapshot json.RawMessage }
	if code := b.do("GET", "/v1/sessions/"+fork.ID, nil, &d); code != http.StatusOK || !strings.Contains(string(d.Snapshot), "asked on a") {
		t.Fatalf("the fork on b: %d %s", code, d.Snapshot)
	}
	if code := c.do("POST", "/v1/sessions/"+fork.ID+"/prompt?wait=true", `{"text":"asked in the fork on c"}`, &res); code != http.StatusOK {
		t.Fatalf("prompt the fork through c: %d %+v", code, res)
	}

	demo := a.createSession(map[string]any{})
	var p struct{ Code string }
	if code := b.do("POST", "/v1/sessions/"+demo.ID+"/fork", nil, &p); code != http.StatusUnprocessableEntity || p.Code != "fork_unsupported" {
		t.Fatalf("fork of the demo agent's session through b: %d %+v", code, p)
	}
	var del struct {
		AgentSession struct{ Status string } `json:"agentSession"`
	}
	if code := b.do("DELETE", "/v1/sessions/"+fork.ID+"?agent=delete", nil, &del); code != http.StatusOK || del.AgentSession.Status != "unsupported" {
		t.Fatalf("delete the fork through b: %d %+v", code, del)
	}
	if code := a.do("GET", "/v1/sessions/"+fork.ID, nil, nil); code != http.StatusNotFound {
		t.Fatalf("the deleted fork on its owner: %d", code)
	}
}
