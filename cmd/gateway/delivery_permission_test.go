package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func resolvedFor(permID string) func(f frame) bool {
	return func(f frame) bool {
		return f.Method == "_gateway/permission_resolved" && strings.Contains(string(f.Raw), `"permissionId":"`+permID+`"`)
	}
}

type resolvedParams struct {
	PermissionID string `json:"permissionId"`
	By           string `json:"by"`
	Outcome      struct {
		Outcome  string `json:"outcome"`
		OptionID string `json:"optionId"`
		Allowed  bool   `json:"allowed"`
		Reason   string `json:"reason"`
	} `json:"outcome"`
}

func resolvedOf(t *testing.T, f frame) resolvedParams {
	t.Helper()
	var m struct{ Params resolvedParams }
	if err := json.Unmarshal(f.Raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.Params
}

func toolStatusIn(frames []frame, id string) string {
	st := ""
	for _, f := range frames {
		var u struct {
			ToolCallID string `json:"toolCallId"`
			Status     string `json:"status"`
		}
		if f.Method == "session/update" && json.Unmarshal(f.Params.Update, &u) == nil && u.ToolCallID == id && u.Status != "" {
			st = u.Status
		}
	}
	return st
}

// TestDeliveryPermissionDeadline: with --permission-timeout 200ms nobody answers and the gateway denies on
// its own (by "deadline", the agent's reject option); the edit fails and the turn ends normally.
func TestDeliveryPermissionDeadline(t *testing.T) {
	t.Parallel()
	g := startGateway(t, "--permission-timeout", "200ms")
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"edit please"}`, &started)
	perm, _ := w.waitFor("permission", isPermissionRequest)
	res, _ := w.waitFor("permission_resolved", resolvedFor(permIDOf(perm)))
	if r := resolvedOf(t, res); r.By != "deadline" || r.Outcome.Allowed || r.Outcome.OptionID != "reject-once" {
		t.Fatalf("resolution %s", res.Raw)
	}
	ended, _ := w.waitFor("turn_ended", turnEnded(started.TurnID))
	if ended.Params.StopReason != "end_turn" {
		t.Fatalf("turn_ended %s", ended.Raw)
	}
	if st := toolStatusIn(w.snapshot(), "edit_1"); st != "failed" {
		t.Fatalf("edit %q after the deadline", st)
	}
	var prob struct{ Code string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/permissions/"+permIDOf(perm), `{"optionId":"allow-once"}`, &prob); code != http.StatusConflict || prob.Code != "already_resolved" {
		t.Fatalf("answer after deadline: %d %+v", code, prob)
	}
}

// TestDeliveryPermissionRace: many answers at once, over REST and over two sockets: exactly one wins (200 or
// no error), every other REST answer gets 409 already_resolved and every other socket answer -32010, and
// clients see exactly one permission_resolved.
func TestDeliveryPermissionRace(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	s := g.createSession(nil)
	w1 := g.dial("/v1/sessions/" + s.ID + "/ws")
	w2 := g.dial("/v1/sessions/" + s.ID + "/ws")
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"edit please"}`, &started)
	perm, _ := w1.waitFor("permission", isPermissionRequest)
	w2.waitFor("permission", isPermissionRequest)
	id := permIDOf(perm)

	const nREST = 6
	codes := make([]int, nREST)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range nREST {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			codes[i], _, _ = g.httpDo(context.Background(), "POST", "/v1/sessions/"+s.ID+"/permissions/"+id, `{"optionId":"allow-once"}`, nil)
		}()
	}
	answer := map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow-once"}}}
	close(gate)
	w1.send(answer)
	w2.send(answer)
	wg.Wait()
	w1.waitFor("turn_ended", turnEnded(started.TurnID))
	// Each socket answer that lost got an error reply; the winner (if a socket) got none. Wait for the replies
	// of the losers: the number of wins must be exactly one over REST and sockets together.
	restWins := 0
	for _, c := range codes {
		switch c {
		case http.StatusOK:
			restWins++
		case http.StatusConflict:
		default:
			t.Fatalf("REST answer: %d", c)
		}
	}
	wantSocketErrors := 2
	if restWins == 0 {
		wantSocketErrors = 1
	}
	if restWins > 1 {
		t.Fatalf("%d REST answers won", restWins)
	}
	// The error replies are sent by the socket writers: poll for them through a round trip on each socket (a
	// bogus request gets -32601 after any earlier reply, as replies are sent in order).
	for i, w := range []*wsClient{w1, w2} {
		w.send(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprint("probe", i), "method": "nope"})
		w.waitFor("probe reply", func(f frame) bool { return f.Error != nil && f.Error.Code == -32601 })
	}
	errs := 0
	for _, w := range []*wsClient{w1, w2} {
		for _, f := range w.snapshot() {
			if f.Error != nil && f.Error.Code == -32010 {
				errs++
			}
		}
	}
	if errs != wantSocketErrors {
		t.Fatalf("%d REST wins, %d socket already_resolved errors (want %d)", restWins, errs, wantSocketErrors)
	}
	n := 0
	for _, f := range w1.snapshot() {
		if resolvedFor(id)(f) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d permission_resolved frames", n)
	}
}

// TestDeliveryPermissionAnswersAfterCancelAndUnknownOption: an unknown option is 422 (REST) / -32602 (socket)
// and the request stays pending; after cancel every answer is 409.
func TestDeliveryPermissionAnswersAfterCancelAndUnknownOption(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"edit please"}`, &started)
	perm, _ := w.waitFor("permission", isPermissionRequest)
	id := permIDOf(perm)
	var prob struct{ Code string }
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/permissions/"+id, `{"optionId":"nope"}`, &prob); code != http.StatusUnprocessableEntity || prob.Code != "unknown_option" {
		t.Fatalf("unknown option: %d %+v", code, prob)
	}
	w.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "nope"}}})
	w.waitFor("invalid params", func(f frame) bool { return f.Error != nil && f.Error.Code == -32602 })
	var v sessionJSON
	if g.do("GET", "/v1/sessions/"+s.ID, nil, &v); len(v.PendingPermissions) != 1 || v.PendingPermissions[0].ID != id {
		t.Fatalf("pending after unknown options: %+v", v.PendingPermissions)
	}
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/cancel", nil, nil); code != http.StatusAccepted {
		t.Fatalf("cancel: %d", code)
	}
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/permissions/"+id, `{"optionId":"allow-once"}`, &prob); code != http.StatusConflict || prob.Code != "already_resolved" {
		t.Fatalf("answer after cancel: %d %+v", code, prob)
	}
	w.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow-once"}}})
	w.waitFor("-32010", func(f frame) bool { return f.Error != nil && f.Error.Code == -32010 })
	ended, _ := w.waitFor("turn_ended", turnEnded(started.TurnID))
	if ended.Params.StopReason != "cancelled" {
		t.Fatalf("turn_ended %s", ended.Raw)
	}
	res, _ := w.waitFor("resolved", resolvedFor(id))
	if r := resolvedOf(t, res); r.By != "cancel" || r.Outcome.Outcome != "cancelled" {
		t.Fatalf("resolution %s", res.Raw)
	}
}

// TestDeliveryPermissionRedeliveredOnResume: a client that connects with after beyond a pending request's seq
// still gets the request, before replay_complete, as the logged frame marked `_meta.gateway.resent: true` (its
// seq is older than the cursor: the client must not move back to it), and can answer it.
func TestDeliveryPermissionRedeliveredOnResume(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"edit please"}`, &started)
	perm, _ := w.waitFor("permission", isPermissionRequest)
	var v sessionJSON
	g.do("GET", "/v1/sessions/"+s.ID, nil, &v)
	if v.LastSeq <= perm.Params.Meta.Gateway.Seq && v.LastSeq != perm.Params.Meta.Gateway.Seq {
		t.Fatalf("head %d before the request %d", v.LastSeq, perm.Params.Meta.Gateway.Seq)
	}
	for _, after := range []uint64{perm.Params.Meta.Gateway.Seq, v.LastSeq} {
		r := g.dial(fmt.Sprintf("/v1/sessions/%s/ws?after=%d&epoch=%s", s.ID, after, s.Epoch))
		_, done := r.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
		var got []frame
		for _, f := range r.snapshot()[:done] {
			if isPermissionRequest(f) {
				got = append(got, f)
			}
		}
		if len(got) != 1 || strings.Replace(string(got[0].Raw), `,"resent":true}`, `}`, 1) != string(perm.Raw) ||
			!strings.Contains(string(got[0].Raw), `"resent":true}`) {
			t.Fatalf("after=%d: %d request frames before replay_complete:\n%s\nwant\n%s", after, len(got), r.dump(), perm.Raw)
		}
	}
	// The late client answers it.
	late := g.dial(fmt.Sprintf("/v1/sessions/%s/ws?after=%d&epoch=%s", s.ID, v.LastSeq, s.Epoch))
	p2, _ := late.waitFor("re-sent request", isPermissionRequest)
	late.send(map[string]any{"jsonrpc": "2.0", "id": permIDOf(p2), "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow-once"}}})
	late.waitFor("turn_ended", turnEnded(started.TurnID))
	if st := toolStatusIn(late.snapshot(), "edit_1"); st != "completed" {
		t.Fatalf("edit %q after the late client allowed it", st)
	}
}

// TestDeliveryPermissionPolicies: approve-all and deny-all decide at once (by "policy", logged for audit);
// approve-reads allows a read-kind request and leaves an edit-kind one to a client. Options are picked by
// kind: the test agent's option with id "allow" is of kind reject_once.
func TestDeliveryPermissionPolicies(t *testing.T) {
	t.Parallel()
	t.Run("demo", func(t *testing.T) {
		t.Parallel()
		g := startGateway(t)
		for _, tc := range []struct{ policy, edit, option string }{
			{"approve-all", "completed", "allow-once"},
			{"deny-all", "failed", "reject-once"},
		} {
			s := g.createSession(map[string]string{"permissionPolicy": tc.policy})
			w := g.dial("/v1/sessions/" + s.ID + "/ws")
			var res struct{ TurnID, StopReason string }
			if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"edit please"}`, &res); code != http.StatusOK {
				t.Fatalf("%s: prompt %d", tc.policy, code)
			}
			w.waitFor("turn_ended", turnEnded(res.TurnID))
			fs := w.snapshot()
			req, ri := w.waitFor("request", isPermissionRequest)
			rf, rfi := w.waitFor("resolved", resolvedFor(permIDOf(req)))
			if r := resolvedOf(t, rf); r.By != "policy" || r.Outcome.OptionID != tc.option || ri > rfi {
				t.Fatalf("%s: resolution %s", tc.policy, rf.Raw)
			}
			if st := toolStatusIn(fs, "edit_1"); st != tc.edit {
				t.Fatalf("%s: edit %q", tc.policy, st)
			}
		}
	})
	t.Run("by-kind", func(t *testing.T) {
		t.Parallel()
		g, _ := testAgentGateway(t, "perms")
		for _, tc := range []struct{ policy, read, edit string }{
			{"approve-all", "go", "go"},
			{"deny-all", "allow", "allow"}, // the first reject-kind option, whose id happens to be "allow"
			{"approve-reads", "go", ""},
		} {
			s := g.createSession(map[string]string{"permissionPolicy": tc.policy})
			w := g.dial("/v1/sessions/" + s.ID + "/ws")
			var started struct{ TurnID string }
			g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"go"}`, &started)
			if tc.edit == "" {
				// approve-reads: the edit waits for a client.
				var editReq frame
				editReq, _ = w.waitFor("edit request", func(f frame) bool {
					return isPermissionRequest(f) && strings.Contains(string(f.Raw), `"perm_edit"`)
				})
				var v sessionJSON
				g.do("GET", "/v1/sessions/"+s.ID, nil, &v)
				if len(v.PendingPermissions) != 1 || v.PendingPermissions[0].ID != permIDOf(editReq) {
					t.Fatalf("approve-reads: pending %+v", v.PendingPermissions)
				}
				if code := g.do("POST", "/v1/sessions/"+s.ID+"/permissions/"+permIDOf(editReq), `{"optionId":"never"}`, nil); code != http.StatusOK {
					t.Fatalf("answer: %d", code)
				}
				tc.edit = "never"
			}
			w.waitFor("turn_ended", turnEnded(started.TurnID))
			fs := w.snapshot()
			for _, tool := range []struct{ id, want string }{{"perm_read", tc.read}, {"perm_edit", tc.edit}} {
				req, _ := w.waitFor("request", func(f frame) bool { return isPermissionRequest(f) && strings.Contains(string(f.Raw), `"`+tool.id+`"`) })
				rf, _ := w.waitFor("resolved", resolvedFor(permIDOf(req)))
				r := resolvedOf(t, rf)
				if r.Outcome.OptionID != tool.want {
					t.Fatalf("%s %s: chose %s", tc.policy, tool.id, rf.Raw)
				}
				wantBy := "policy"
				if tc.policy == "approve-reads" && tool.id == "perm_edit" {
					wantBy = "rest"
				}
				if r.By != wantBy {
					t.Fatalf("%s %s: by %q, want %q", tc.policy, tool.id, r.By, wantBy)
				}
				wantStatus := map[bool]string{true: "completed", false: "failed"}[tool.want == "go"]
				if st := toolStatusIn(fs, tool.id); st != wantStatus {
					t.Fatalf("%s %s: status %q, want %q", tc.policy, tool.id, st, wantStatus)
				}
			}
		}
	})
}
