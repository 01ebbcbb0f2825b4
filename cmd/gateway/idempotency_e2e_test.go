package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// A prompt sent with an Idempotency-Key runs once however often it is sent, on any node, before and after a
// restart; a prompt refused because a turn runs is told which turn, so its client can join that turn and send
// its own prompt again afterwards. The demo agent's full turn waits on its permission request, so a turn runs
// for as long as a test leaves it unanswered.

// keyedReply is what a keyed prompt answered: its status, the Idempotent-Replayed header, and the body as a
// turn id or a problem.
type keyedReply struct {
	code     int
	replayed string
	TurnID   string `json:"turnId"`
	Status   any    `json:"status"` // a turn's state (a string) or a problem's status (a number)
	Stop     string `json:"stopReason"`
	Code     string `json:"code"`
	Started  *struct {
		Principal string `json:"principal"`
	} `json:"startedBy"`
	Permissions []struct {
		ID string `json:"id"`
	} `json:"permissions"`
}

// promptKeyed posts body to the session's prompt route with key as its Idempotency-Key ("" = no header).
func (g *gateway) promptKeyed(id, query, key, body string) keyedReply {
	g.t.Helper()
	req, _ := http.NewRequest("POST", g.base+"/v1/sessions/"+id+"/prompt"+query, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("prompt: %v", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	r := keyedReply{code: resp.StatusCode, replayed: resp.Header.Get("Idempotent-Replayed")}
	if err := json.Unmarshal(data, &r); err != nil {
		g.t.Fatalf("prompt: decode %q: %v", data, err)
	}
	return r
}

// turnsStarted counts the `_gateway/turn_started` frames of the session's log as g serves it.
func (g *gateway) turnsStarted(t *testing.T, id string) int {
	t.Helper()
	var s sessionJSON
	if code := g.do("GET", "/v1/sessions/"+id, nil, &s); code != http.StatusOK {
		t.Fatalf("GET the session: %d", code)
	}
	n := 0
	for _, e := range g.fullLogWS(t, id, s.Epoch) {
		if bytes.Contains(e.Raw, []byte(`"method":"_gateway/turn_started"`)) {
			n++
		}
	}
	return n
}

// finishTurn answers the running turn's permission request through g and waits for the turn's end.
func finishTurn(t *testing.T, g *gateway, id string) {
	t.Helper()
	var asked keyedReply
	if code := g.do("GET", "/v1/sessions/"+id+"/turn?wait=true", nil, &asked); code != http.StatusOK || asked.Status != "awaiting_permission" || len(asked.Permissions) != 1 {
		t.Fatalf("wait for the permission request: %d %+v", code, asked)
	}
	var ended keyedReply
	if code := g.do("POST", "/v1/sessions/"+id+"/permissions/"+asked.Permissions[0].ID+"?wait=true", `{"optionId":"allow-once"}`, &ended); code != http.StatusOK || ended.Stop != "end_turn" {
		t.Fatalf("answer the permission request: %d %+v", code, ended)
	}
}

func TestPromptIdempotencyKey(t *testing.T) {
	g := startGateway(t)
	s := g.createSession(map[string]any{})
	const body = `{"text":"refactor the parser"}`

	first := g.promptKeyed(s.ID, "", "key-1", body)
	if first.code != http.StatusAccepted || first.TurnID == "" || first.replayed != "" {
		t.Fatalf("first prompt: %+v", first)
	}
	// While the turn runs: the same key and body is the same turn, not a 409.
	if again := g.promptKeyed(s.ID, "", "key-1", body); again.code != http.StatusAccepted || again.TurnID != first.TurnID || again.replayed != "true" {
		t.Fatalf("the same prompt again: %+v, want 202 turn %s replayed", again, first.TurnID)
	}
	if other := g.promptKeyed(s.ID, "", "key-1", `{"text":"something else"}`); other.code != http.StatusUnprocessableEntity || other.Code != "idempotency_key_reused" {
		t.Fatalf("the key with another prompt: %+v", other)
	}
	// Another prompt is refused, naming the running turn and who started it.
	for _, key := range []string{"key-2", ""} {
		busy := g.promptKeyed(s.ID, "", key, `{"text":"another prompt"}`)
		if busy.code != http.StatusConflict || busy.Code != "turn_running" || busy.TurnID != first.TurnID || busy.Started == nil || busy.Started.Principal != "anonymous" {
			t.Fatalf("a second prompt (key %q) while the turn runs: %+v, want 409 turn_running naming %s", key, busy, first.TurnID)
		}
	}
	for _, bad := range []string{strings.Repeat("k", 256), "ключ"} {
		if r := g.promptKeyed(s.ID, "", bad, body); r.code != http.StatusBadRequest || r.Code != "invalid_idempotency_key" {
			t.Fatalf("key %q: %+v", bad, r)
		}
	}

	finishTurn(t, g, s.ID)
	// After the turn: the key still names it, with wait=true its end.
	if done := g.promptKeyed(s.ID, "?wait=true", "key-1", body); done.code != http.StatusOK || done.TurnID != first.TurnID || done.Status != "ended" || done.Stop != "end_turn" {
		t.Fatalf("the prompt again after its turn: %+v", done)
	}
	if n := g.turnsStarted(t, s.ID); n != 1 {
		t.Fatalf("%d turns started, want 1", n)
	}
	// A new key is a new prompt.
	if next := g.promptKeyed(s.ID, "", "key-2", `{"text":"another prompt"}`); next.code != http.StatusAccepted || next.TurnID == first.TurnID || next.replayed != "" {
		t.Fatalf("a new key: %+v", next)
	}
	// The first key still names its turn, no longer the session's latest: how it ended.
	if old := g.promptKeyed(s.ID, "?wait=true", "key-1", body); old.code != http.StatusOK || old.TurnID != first.TurnID || old.Stop != "end_turn" || old.replayed != "true" {
		t.Fatalf("the first prompt again during a later turn: %+v", old)
	}
}

// The key is in the turn's start frame: a restarted gateway knows it from the log.
func TestPromptIdempotencyKeyRestart(t *testing.T) {
	dir, workdir := t.TempDir(), t.TempDir()
	g1 := startGateway(t, "--data-dir", dir, "--workdir", workdir)
	s := g1.createSession(map[string]any{})
	const body = `{"text":"refactor the parser"}`
	first := g1.promptKeyed(s.ID, "", "key-1", body)
	if first.code != http.StatusAccepted {
		t.Fatalf("first prompt: %+v", first)
	}
	finishTurn(t, g1, s.ID)
	if err := g1.stop(); err != nil {
		t.Fatal(err)
	}
	g2 := startGateway(t, "--data-dir", dir, "--workdir", workdir)
	if again := g2.promptKeyed(s.ID, "", "key-1", body); again.code != http.StatusAccepted || again.TurnID != first.TurnID || again.replayed != "true" {
		t.Fatalf("the prompt again after a restart: %+v, want 202 turn %s replayed", again, first.TurnID)
	}
	if n := g2.turnsStarted(t, s.ID); n != 1 {
		t.Fatalf("%d turns started, want 1", n)
	}
}

// clusterIdempotency: a keyed prompt sent through b, then again through every node while it runs and after,
// starts one turn; other prompts through any node are told which turn runs.
func clusterIdempotency(t *testing.T, gws []*gateway) {
	a, b, c := gws[0], gws[1], gws[2]
	s := a.createSession(map[string]any{})
	const body = `{"text":"refactor the parser"}`
	first := b.promptKeyed(s.ID, "", "key-1", body)
	if first.code != http.StatusAccepted || first.TurnID == "" {
		t.Fatalf("prompt through b: %+v", first)
	}
	for _, g := range []*gateway{c, a, b} {
		if again := g.promptKeyed(s.ID, "", "key-1", body); again.code != http.StatusAccepted || again.TurnID != first.TurnID || again.replayed != "true" {
			t.Fatalf("%s: the same prompt again: %+v, want 202 turn %s replayed", g.base, again, first.TurnID)
		}
		busy := g.promptKeyed(s.ID, "", "key-2", `{"text":"another prompt"}`)
		if busy.code != http.StatusConflict || busy.Code != "turn_running" || busy.TurnID != first.TurnID || busy.Started == nil || busy.Started.Principal != "anonymous" {
			t.Fatalf("%s: another prompt: %+v, want 409 turn_running naming %s", g.base, busy, first.TurnID)
		}
		if other := g.promptKeyed(s.ID, "", "key-1", `{"text":"something else"}`); other.code != http.StatusUnprocessableEntity || other.Code != "idempotency_key_reused" {
			t.Fatalf("%s: the key with another prompt: %+v", g.base, other)
		}
	}
	finishTurn(t, c, s.ID)
	for _, g := range []*gateway{c, b} {
		if done := g.promptKeyed(s.ID, "?wait=true", "key-1", body); done.code != http.StatusOK || done.TurnID != first.TurnID || done.Stop != "end_turn" {
			t.Fatalf("%s: the prompt again after its turn: %+v", g.base, done)
		}
	}
	if n := a.turnsStarted(t, s.ID); n != 1 {
		t.Fatalf("%d turns started, want 1", n)
	}
}

// A prompt refused while a turn runs names that turn and who started it, so its client can join the turn
// (GET /turn?wait=true) and prompt again once it ended.
func TestTurnRunningNamesTheTurn(t *testing.T) {
	g := startGateway(t)
	s := g.createSession(map[string]any{})
	first := g.promptKeyed(s.ID, "", "", `{"text":"refactor the parser"}`)
	if first.code != http.StatusAccepted {
		t.Fatalf("first prompt: %+v", first)
	}
	busy := g.promptKeyed(s.ID, "", "", `{"text":"another prompt"}`)
	if busy.code != http.StatusConflict || busy.Code != "turn_running" || busy.TurnID != first.TurnID || busy.Started == nil || busy.Started.Principal != "anonymous" {
		t.Fatalf("a second prompt while the turn runs: %+v, want 409 turn_running naming %s", busy, first.TurnID)
	}
}

// A page of an allowed origin may send the key and read whether its prompt was replayed.
func TestPromptIdempotencyKeyCORS(t *testing.T) {
	g := startGateway(t, "--allowed-origins", "app.example")
	s := g.createSession(map[string]any{})
	pre := g.rawResponse("OPTIONS", "/v1/sessions/"+s.ID+"/prompt", map[string]string{"Origin": "http://app.example",
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "idempotency-key, content-type"})
	if allow := pre.Header.Get("Access-Control-Allow-Headers"); pre.StatusCode != http.StatusNoContent || !strings.Contains(allow, "Idempotency-Key") {
		t.Fatalf("preflight: %d, Allow-Headers %q", pre.StatusCode, allow)
	}
	resp := g.rawResponse("GET", "/v1/sessions/"+s.ID, map[string]string{"Origin": "http://app.example"})
	if expose := resp.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(expose, "Idempotent-Replayed") {
		t.Fatalf("Expose-Headers %q", expose)
	}
}

// With 2 of 3 nats-servers down, a prompt through a non-owner runs on the owner but its answer cannot say so
// (503): sent again with its key, through that node or the owner, during the outage or after, it runs once.
func TestPromptIdempotencyKeyQuorumLoss(t *testing.T) {
	f := natstest.NewForming(t, 3)
	for i := range 3 {
		f.Start(i)
	}
	for _, u := range f.URLs {
		natstest.Poll(t, "nats-server "+u+" with JetStream ready", 50*time.Millisecond, func() bool { return natstest.JetStreamReady(u) })
	}
	a, _, _ := startChildGateway(t, "--nats-url", f.URLs[0], "--node-id", "a", "--nats-replicas", "3")
	b, _, _ := startChildGateway(t, "--nats-url", f.URLs[0], "--node-id", "b", "--nats-replicas", "3")
	waitNodeCount(t, a, 2)
	waitNodeCount(t, b, 2)
	s := a.createSession(map[string]any{})
	if code := b.do("GET", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusOK {
		t.Fatalf("the session on b: %d", code)
	}

	f.Stop(1)
	f.Stop(2)
	waitUntil(t, "b's /readyz 503 after the quorum was lost", 30*time.Second, func() bool {
		return b.do("GET", "/readyz", nil, nil) == http.StatusServiceUnavailable
	})
	// "quick" is a turn that ends at once: a retry that started a turn would start a second one.
	const body = `{"prompt":[{"type":"text","text":"quick"}]}`
	first := b.promptKeyed(s.ID, "", "key-1", body)
	t.Logf("the prompt through b during the outage: %+v", first)
	for range 2 {
		if r := b.promptKeyed(s.ID, "", "key-1", body); r.code != http.StatusServiceUnavailable && (r.code != http.StatusAccepted || r.replayed != "true") {
			t.Fatalf("the prompt again through b during the outage: %+v, want 503 or a replay", r)
		}
	}
	onOwner := a.promptKeyed(s.ID, "", "key-1", body)
	if onOwner.code != http.StatusAccepted || onOwner.replayed != "true" {
		t.Fatalf("the prompt again through the owner during the outage: %+v, want 202 replayed", onOwner)
	}

	f.Start(1)
	f.Start(2)
	waitUntil(t, "b's /readyz 200 after the quorum came back", 2*time.Minute, func() bool {
		return b.do("GET", "/readyz", nil, nil) == http.StatusOK
	})
	var after keyedReply
	waitUntil(t, "the prompt again through b to name its turn", time.Minute, func() bool {
		after = b.promptKeyed(s.ID, "", "key-1", body)
		return after.code != http.StatusServiceUnavailable
	})
	if after.code != http.StatusAccepted || after.replayed != "true" || after.TurnID != onOwner.TurnID {
		t.Fatalf("the prompt again through b after the outage: %+v, want 202 turn %s replayed", after, onOwner.TurnID)
	}
	if n := a.turnsStarted(t, s.ID); n != 1 {
		t.Fatalf("%d turns started, want 1", n)
	}
}
