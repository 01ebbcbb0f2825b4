package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/translate/ask"
)

// These tests run the built-in demo agent in process inside a synctest bubble: the permission deadline
// (five minutes by default) passes in fake time, and the bubble fails the test if any goroutine of the
// session, the agent connection or the agent is left blocked at the end.

func dlRegistry(t *testing.T, cfg Config) *Registry {
	t.Helper()
	cfg.Workdir = t.TempDir()
	cfg.Logger = slog.New(slog.DiscardHandler)
	spec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{}, in, out)
	}}
	r, err := NewRegistry(cfg, []agents.Spec{spec}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func dlSession(t *testing.T, r *Registry, policy string) *Session {
	t.Helper()
	s, err := r.Create(context.Background(), CreateOptions{PermissionPolicy: policy})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func dlPrompt(text string) []json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	return []json.RawMessage{b}
}

// dlFrame is one frame of a session's log, decoded for assertions.
type dlFrame struct {
	Seq    uint64
	Raw    string
	ID     string
	Method string
	Params struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
			ToolCallID    string `json:"toolCallId"`
			Status        string `json:"status"`
		} `json:"update"`
		PermissionID string `json:"permissionId"`
		By           string `json:"by"`
		Outcome      struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
			Allowed  bool   `json:"allowed"`
			Reason   string `json:"reason"`
		} `json:"outcome"`
		StopReason string `json:"stopReason"`
		Status     string `json:"status"`
		Reason     string `json:"reason"`
	} `json:"params"`
}

func dlLog(t *testing.T, s *Session) []dlFrame {
	t.Helper()
	res, err := s.Log().Read(0, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]dlFrame, 0, len(res.Entries))
	for _, e := range res.Entries {
		var f dlFrame
		var id json.RawMessage
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(e.Frame, &f); err != nil {
			t.Fatalf("frame %d: %v", e.Seq, err)
		}
		_ = json.Unmarshal(e.Frame, &probe)
		id = probe.ID
		_ = json.Unmarshal(id, &f.ID)
		f.Seq, f.Raw = e.Seq, string(e.Frame)
		out = append(out, f)
	}
	return out
}

func dlFind(fs []dlFrame, pred func(dlFrame) bool) []dlFrame {
	var out []dlFrame
	for _, f := range fs {
		if pred(f) {
			out = append(out, f)
		}
	}
	return out
}

func dlResolved(fs []dlFrame) []dlFrame {
	return dlFind(fs, func(f dlFrame) bool { return f.Method == "_gateway/permission_resolved" })
}

func dlToolStatus(fs []dlFrame, id string) string {
	st := ""
	for _, f := range fs {
		if f.Method == "session/update" && f.Params.Update.ToolCallID == id && f.Params.Update.Status != "" {
			st = f.Params.Update.Status
		}
	}
	return st
}

func dlTurnEnded(t *testing.T, fs []dlFrame) dlFrame {
	t.Helper()
	e := dlFind(fs, func(f dlFrame) bool { return f.Method == "_gateway/turn_ended" })
	if len(e) != 1 {
		t.Fatalf("%d turn_ended frames", len(e))
	}
	return e[0]
}

// dlPendingOne waits until the bubble is idle and returns the single pending request.
func dlPendingOne(t *testing.T, s *Session) PermissionView {
	t.Helper()
	synctest.Wait()
	ps := s.PendingPermissions()
	if len(ps) != 1 {
		t.Fatalf("%d pending permission requests, want 1", len(ps))
	}
	return ps[0]
}

func dlSelect(id string) ask.ClientAnswer {
	var a ask.ClientAnswer
	a.Outcome.Outcome, a.Outcome.OptionID = "selected", id
	return a
}

func TestPermissionDeadlineDeniesInFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := dlRegistry(t, Config{}) // PermissionTimeout 0 = 5 min
		s := dlSession(t, r, PolicyAsk)
		defer s.Close("test over")
		turn, err := s.Prompt(dlPrompt("edit something"))
		if err != nil {
			t.Fatal(err)
		}
		p := dlPendingOne(t, s)
		if d := p.Deadline.Sub(p.CreatedAt); d != 5*time.Minute {
			t.Fatalf("deadline %s after creation, want 5m", d)
		}
		time.Sleep(5*time.Minute - time.Millisecond)
		synctest.Wait()
		if len(s.PendingPermissions()) != 1 {
			t.Fatal("resolved before its deadline")
		}
		time.Sleep(time.Millisecond)
		<-turn.Done()
		fs := dlLog(t, s)
		res := dlResolved(fs)
		if len(res) != 1 || res[0].Params.By != "deadline" || res[0].Params.Outcome.Allowed || res[0].Params.PermissionID != p.ID {
			t.Fatalf("resolution %+v", res)
		}
		if o := res[0].Params.Outcome; o.OptionID != "reject-once" || o.Reason == "" {
			t.Fatalf("deadline outcome %+v: want the agent's reject option with a reason", o)
		}
		if st := dlToolStatus(fs, "edit_1"); st != "failed" {
			t.Fatalf("edit tool status %q after deadline denial", st)
		}
		if e := dlTurnEnded(t, fs); e.Params.StopReason != "end_turn" {
			t.Fatalf("turn_ended %s", e.Raw)
		}
		if _, err := s.Answer(p.ID, dlSelect("allow-once"), "client"); !errors.Is(err, sessionerr.ErrAlreadyResolved) {
			t.Fatalf("answer after deadline: %v", err)
		}
	})
}

func TestPermissionConcurrentAnswersOneWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := dlRegistry(t, Config{})
		s := dlSession(t, r, PolicyAsk)
		defer s.Close("test over")
		turn, _ := s.Prompt(dlPrompt("edit something"))
		p := dlPendingOne(t, s)
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				opt := "allow-once"
				if i%2 == 1 {
					opt = "reject-once"
				}
				_, errs[i] = s.Answer(p.ID, dlSelect(opt), "client")
			}()
		}
		wg.Wait()
		<-turn.Done()
		won, winner := 0, -1
		for i, err := range errs {
			switch {
			case err == nil:
				won++
				winner = i
			case !errors.Is(err, sessionerr.ErrAlreadyResolved):
				t.Fatalf("answer %d: %v", i, err)
			}
		}
		if won != 1 {
			t.Fatalf("%d answers won", won)
		}
		fs := dlLog(t, s)
		res := dlResolved(fs)
		if len(res) != 1 || res[0].Params.By != "client" {
			t.Fatalf("resolutions %+v", res)
		}
		wantStatus := map[bool]string{true: "completed", false: "failed"}[winner%2 == 0]
		if st := dlToolStatus(fs, "edit_1"); st != wantStatus {
			t.Fatalf("winner %d: edit %q, want %q", winner, st, wantStatus)
		}
	})
}

func TestPermissionUnknownOptionStaysPendingAndCancelResolves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := dlRegistry(t, Config{})
		s := dlSession(t, r, PolicyAsk)
		defer s.Close("test over")
		turn, _ := s.Prompt(dlPrompt("edit something"))
		p := dlPendingOne(t, s)
		if _, err := s.Answer(p.ID, dlSelect("no-such-option"), "client"); !errors.Is(err, sessionerr.ErrUnknownOption) {
			t.Fatalf("unknown option: %v", err)
		}
		var bad ask.ClientAnswer
		bad.Outcome.Outcome = "maybe"
		if _, err := s.Answer(p.ID, bad, "client"); !errors.Is(err, sessionerr.ErrBadRequest) {
			t.Fatalf("bad outcome: %v", err)
		}
		synctest.Wait()
		if len(s.PendingPermissions()) != 1 || len(dlResolved(dlLog(t, s))) != 0 {
			t.Fatal("a rejected answer resolved the request")
		}
		if _, err := s.Cancel(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Answer(p.ID, dlSelect("allow-once"), "client"); !errors.Is(err, sessionerr.ErrAlreadyResolved) {
			t.Fatalf("answer after cancel: %v", err)
		}
		<-turn.Done()
		fs := dlLog(t, s)
		res := dlResolved(fs)
		if len(res) != 1 || res[0].Params.By != "cancel" || res[0].Params.Outcome.Outcome != "cancelled" {
			t.Fatalf("resolutions %+v", res)
		}
		if e := dlTurnEnded(t, fs); e.Params.StopReason != "cancelled" {
			t.Fatalf("turn_ended %s", e.Raw)
		}
		if _, err := s.Answer("never-issued", dlSelect("allow-once"), "client"); !errors.Is(err, sessionerr.ErrPermissionUnknown) {
			t.Fatalf("unknown id: %v", err)
		}
	})
}

func TestPermissionPoliciesWithDemo(t *testing.T) {
	for _, tc := range []struct {
		policy, edit, option string
		allowed              bool
	}{
		{PolicyApproveAll, "completed", "allow-once", true},
		{PolicyDenyAll, "failed", "reject-once", false},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := dlRegistry(t, Config{})
				s := dlSession(t, r, tc.policy)
				defer s.Close("test over")
				turn, _ := s.Prompt(dlPrompt("edit something"))
				<-turn.Done()
				fs := dlLog(t, s)
				res := dlResolved(fs)
				if len(res) != 1 || res[0].Params.By != "policy" || res[0].Params.Outcome.OptionID != tc.option || res[0].Params.Outcome.Allowed != tc.allowed {
					t.Fatalf("resolutions %+v", res)
				}
				if st := dlToolStatus(fs, "edit_1"); st != tc.edit {
					t.Fatalf("edit %q, want %q", st, tc.edit)
				}
				// The request frame is logged before its resolution, so clients can audit it.
				req := dlFind(fs, func(f dlFrame) bool { return f.Method == "session/request_permission" })
				if len(req) != 1 || req[0].Seq >= res[0].Seq || req[0].ID != res[0].Params.PermissionID {
					t.Fatalf("request %+v, resolution at %d", req, res[0].Seq)
				}
			})
		})
	}
}

// dlSink is a Sink that records everything and stops when told.
type dlSink struct {
	mu     sync.Mutex
	frames []eventlog.Entry
	notes  []string
	stopAt func(method string) bool
}

var errDLSinkDone = errors.New("sink done")

func (k *dlSink) Frame(seq uint64, frame []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.frames = append(k.frames, eventlog.Entry{Seq: seq, Frame: frame})
	return nil
}

func (k *dlSink) Note(method string, params any) error {
	k.mu.Lock()
	k.notes = append(k.notes, method)
	k.mu.Unlock()
	if k.stopAt != nil && k.stopAt(method) {
		return errDLSinkDone
	}
	return nil
}

func (k *dlSink) Wait(wake <-chan struct{}) error { return errDLSinkDone }

// TestPermissionRedeliveredToLateSubscriber: a subscriber that resumes after a pending request's seq (also after
// newer frames) still gets the request frame once before replay_complete, marked `_meta.gateway.resent: true`
// with its original seq, and otherwise the logged frame byte for byte, so its cursor never moves backwards; one
// that resumes before it gets it in the replay only, unmarked; a resolved request is never re-sent.
func TestPermissionRedeliveredToLateSubscriber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := dlRegistry(t, Config{})
		s := dlSession(t, r, PolicyAsk)
		defer s.Close("test over")
		turn, _ := s.Prompt(dlPrompt("edit something"))
		p := dlPendingOne(t, s)
		fs := dlLog(t, s)
		req := dlFind(fs, func(f dlFrame) bool { return f.Method == "session/request_permission" })
		if len(req) != 1 {
			t.Fatalf("%d request frames", len(req))
		}
		// The agent goes on talking while the request is pending: the resume below is after newer frames.
		s.SessionUpdate(json.RawMessage(`{"sessionId":"x","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"meanwhile"}}}`))
		_, head := s.Log().Bounds()
		if head <= req[0].Seq {
			t.Fatalf("no frame after the request (seq %d, head %d): the resume would not be after newer frames", req[0].Seq, head)
		}
		resent := req[0].Raw
		if i := strings.Index(resent, `,"deadline":"`); i < 0 {
			t.Fatalf("request frame without a deadline: %s", resent)
		} else {
			end := i + len(`,"deadline":"`) + strings.IndexByte(resent[i+len(`,"deadline":"`):], '"') + 1
			resent = resent[:end] + `,"resent":true` + resent[end:]
		}
		follow := func(after uint64) *dlSink {
			k := &dlSink{}
			err := s.Follow(s.StartAt(after, true, s.Epoch), k, eventlog.FollowLimits{})
			if !errors.Is(err, errDLSinkDone) {
				t.Fatalf("follow after %d: %v", after, err)
			}
			return k
		}
		for _, after := range []uint64{req[0].Seq, head} {
			k := follow(after)
			if len(k.notes) != 1 || k.notes[0] != "_gateway/replay_complete" {
				t.Fatalf("after %d: notes %v", after, k.notes)
			}
			got := dlFind(dlDecode(t, k.frames), func(f dlFrame) bool { return f.Method == "session/request_permission" })
			if len(got) != 1 || got[0].Raw != resent || got[0].ID != p.ID || got[0].Seq != 0 {
				t.Fatalf("after %d: request frames %+v\nwant the logged frame marked resent: %s", after, got, resent)
			}
			if g := dlGatewayMeta(t, got[0].Raw); !g.Resent || g.Seq != req[0].Seq {
				t.Fatalf("after %d: re-sent request's _meta.gateway %+v, want resent with seq %d", after, g, req[0].Seq)
			}
		}
		k := follow(req[0].Seq - 1)
		got := dlFind(dlDecode(t, k.frames), func(f dlFrame) bool { return f.Method == "session/request_permission" })
		if len(got) != 1 || got[0].Raw != req[0].Raw {
			t.Fatalf("resume before the request: request frames %+v, want it exactly once (in the replay, unmarked)", got)
		}
		if _, err := s.Answer(p.ID, dlSelect("allow-once"), "client"); err != nil {
			t.Fatal(err)
		}
		<-turn.Done()
		_, head = s.Log().Bounds()
		if got := dlFind(dlDecode(t, follow(head).frames), func(f dlFrame) bool { return f.Method == "session/request_permission" }); len(got) != 0 {
			t.Fatalf("a resolved request was re-sent: %+v", got)
		}
	})
}

// dlGatewayMeta decodes a frame's `params._meta.gateway`.
func dlGatewayMeta(t *testing.T, frame string) (g struct {
	Seq    uint64 `json:"seq"`
	Resent bool   `json:"resent"`
}) {
	t.Helper()
	var f struct {
		Params struct {
			Meta struct {
				Gateway json.RawMessage `json:"gateway"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(frame), &f); err != nil || json.Unmarshal(f.Params.Meta.Gateway, &g) != nil {
		t.Fatalf("no _meta.gateway in %s", frame)
	}
	return g
}

func dlDecode(t *testing.T, es []eventlog.Entry) []dlFrame {
	t.Helper()
	out := make([]dlFrame, 0, len(es))
	for _, e := range es {
		var f dlFrame
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(e.Frame, &f); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(e.Frame, &probe)
		_ = json.Unmarshal(probe.ID, &f.ID)
		f.Seq, f.Raw = e.Seq, string(e.Frame)
		out = append(out, f)
	}
	return out
}

// TestSessionCloseIsNotAFailure: closing a healthy session must not report it failed on the way: clients see
// `_gateway/session_status {status: closed}` and never `failed` ("agent exited") for an agent the gateway
// stopped itself. The race (Close stops the agent before it marks the session closed, so watchAgent sees the
// agent go away from a session that is still idle) is lost about once in 80 closes here: 300 rounds.
func TestSessionCloseIsNotAFailure(t *testing.T) {
	for i := range 300 {
		synctest.Test(t, func(t *testing.T) {
			r := dlRegistry(t, Config{})
			s := dlSession(t, r, PolicyAsk)
			s.Close("closed by client")
			fs := dlLog(t, s)
			st := dlFind(fs, func(f dlFrame) bool { return f.Method == "_gateway/session_status" })
			for _, f := range st {
				if f.Params.Status != string(store.StatusClosed) {
					t.Fatalf("run %d: close logged %s", i, f.Raw)
				}
			}
			if len(st) != 1 || !strings.Contains(st[0].Raw, `"closed by client"`) {
				t.Fatalf("run %d: status frames %+v", i, st)
			}
		})
	}
}

// TestAgentCrashMidTurnInFakeTime: the in-process agent dies while its permission request is pending. The
// request is resolved by the gateway, the turn ends with an error, the session fails with the agent's error as
// the reason, a waiting caller gets the error, and (the bubble checks this) no goroutine is left behind.
func TestAgentCrashMidTurnInFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		crash := make(chan struct{})
		spec := agents.Spec{Name: "crashy", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
			dctx, cancel := context.WithCancel(ctx)
			cw := &cutWriter{w: out}
			done := make(chan error, 1)
			go func() { done <- demo.Serve(dctx, demo.Options{}, in, cw) }()
			select {
			case err := <-done:
				cancel()
				return err
			case <-crash:
				// Die like a process: not one more byte reaches the gateway (the demo would otherwise answer
				// its prompt "cancelled" on the way out). The demo winds down in the background.
				cw.cut()
				go func() { cancel(); <-done }()
				return errors.New("crashed")
			}
		}}
		r, err := NewRegistry(Config{Workdir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}, []agents.Spec{spec}, "crashy")
		if err != nil {
			t.Fatal(err)
		}
		s := dlSession(t, r, PolicyAsk)
		defer s.Close("test over")
		turn, _ := s.Prompt(dlPrompt("edit something"))
		p := dlPendingOne(t, s)
		close(crash)
		res := turn.Result()
		if res.Err == nil || res.StopReason != "error" || res.Outcome != "failed" {
			t.Fatalf("turn result %+v: want the agent's failure, stop reason error, outcome failed", res)
		}
		time.Sleep(2 * time.Second) // watchAgent waits up to 1 s for the exit status
		synctest.Wait()
		fs := dlLog(t, s)
		if e := dlTurnEnded(t, fs); !strings.Contains(e.Raw, `"error":{`) || !strings.Contains(e.Raw, `"stopReason":"error"`) || !strings.Contains(e.Raw, `"turnOutcome":"failed"`) {
			t.Fatalf("turn_ended %s: want stopReason error, outcome failed and the error", e.Raw)
		}
		if lt := s.View().LastTurn; lt == nil || lt.StopReason != "error" || lt.Outcome != "failed" || lt.Error == nil {
			t.Fatalf("lastTurn %+v", lt)
		}
		resolved := dlResolved(fs)
		if len(resolved) != 1 || resolved[0].Params.PermissionID != p.ID || resolved[0].Params.Outcome.Allowed {
			t.Fatalf("resolutions %+v", resolved)
		}
		st := dlFind(fs, func(f dlFrame) bool { return f.Method == "_gateway/session_status" })
		if len(st) != 1 || st[0].Params.Status != string(store.StatusFailed) || !strings.Contains(st[0].Params.Reason, "crashed") {
			t.Fatalf("status frames %+v", st)
		}
		if v := s.View(); v.Status != store.StatusFailed || !strings.Contains(v.StatusReason, "crashed") || v.CurrentTurn != nil || len(v.PendingPermissions) != 0 {
			t.Fatalf("view %+v", v)
		}
		if _, err := s.Prompt(dlPrompt("again")); !errors.Is(err, sessionerr.ErrFailed) {
			t.Fatalf("prompt on a failed session: %v", err)
		}
	})
}

// cutWriter passes writes through until cut, then fails them.
type cutWriter struct {
	mu  sync.Mutex
	w   io.Writer
	off bool
}

func (c *cutWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return 0, io.ErrClosedPipe
	}
	return c.w.Write(p)
}

func (c *cutWriter) cut() {
	c.mu.Lock()
	c.off = true
	c.mu.Unlock()
}
