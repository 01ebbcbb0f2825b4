package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
	acp "github.com/coder/acp-go-sdk"
)

// checkRestored rebuilds a session from the live one's log (and its DirView, which the directory keeps) and
// checks it knows what the live one knows: the same Detail (snapshot and status included) but for clients,
// the same `/acp` load replay, the same pending-request re-sends, the same latest turn with its text, the
// same resolved ids, and an epoch chain that resumes the live epoch.
func checkRestored(t *testing.T, live *Session, at string) {
	c := core.ControlOf(live)
	t.Helper()
	synctest.Wait()
	res, err := live.Log().Read(0, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newSession(registryOf(live), live.ID, c.AgentSpec(), CreateOptions{Cwd: live.Cwd, PermissionPolicy: live.Policy})
	defer core.ControlOf(r).CloseRoot()
	r.Epoch, r.CreatedAt = live.Epoch, live.CreatedAt
	c.Lock()
	dv := c.DirViewLocked()
	c.Unlock()
	if err := core.ControlOf(r).RestoreFrom(res.Entries, dv); err != nil {
		t.Fatalf("%s: restore: %v", at, err)
	}

	checkKinds(t, at, res.Entries)
	rres, err := r.Log().Read(0, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range rres.Entries {
		if le := res.Entries[i]; e.Seq != le.Seq || e.Kind != le.Kind {
			t.Fatalf("%s: restored frame %d is %v, live frame %d %v", at, e.Seq, e.Kind, le.Seq, le.Kind)
		}
	}

	ld, rd := live.Detail(), r.Detail()
	if rd.Status != ld.Status || rd.StatusReason != ld.StatusReason {
		t.Fatalf("%s: restored status %s (%q), live %s (%q)", at, rd.Status, rd.StatusReason, ld.Status, ld.StatusReason)
	}
	ld.Clients, rd.Clients = 0, 0
	lj, _ := json.Marshal(ld)
	rj, _ := json.Marshal(rd)
	if !bytes.Equal(lj, rj) {
		t.Fatalf("%s: restored detail differs:\n%s\nlive:\n%s", at, rj, lj)
	}
	lr, lseq := live.Replay()
	rr, rseq := r.Replay()
	if lseq != rseq || !reflect.DeepEqual(lr, rr) {
		t.Fatalf("%s: restored replay (seq %d):\n%s\nlive (seq %d):\n%s", at, rseq, bytes.Join(rr, []byte("\n")), lseq, bytes.Join(lr, []byte("\n")))
	}
	if lp, rp := live.PendingFrames(lseq), r.PendingFrames(rseq); !reflect.DeepEqual(lp, rp) {
		t.Fatalf("%s: pending re-sends differ:\n%+v\nlive:\n%+v", at, rp, lp)
	}
	lt, lerr := live.LatestTurn()
	rt, rerr := r.LatestTurn()
	if (lerr == nil) != (rerr == nil) {
		t.Fatalf("%s: latest turn %v, live %v", at, rerr, lerr)
	}
	if lt != nil {
		ls, rs := live.TurnState(lt), r.TurnState(rt)
		lsj, _ := json.Marshal(ls)
		rsj, _ := json.Marshal(rs)
		if !bytes.Equal(lsj, rsj) || errText(ls.Err) != errText(rs.Err) {
			t.Fatalf("%s: restored turn %s (err %v), live %s (err %v)", at, rsj, rs.Err, lsj, ls.Err)
		}
	}
	lres := c.ResolvedOrder()
	if res := core.ControlOf(r).ResolvedOrder(); !reflect.DeepEqual(res, lres) {
		t.Fatalf("%s: resolved ids %v, live %v", at, res, lres)
	}
	if want := []eventlog.EpochStart{{Epoch: live.Epoch, FirstSeq: 1}}; !reflect.DeepEqual(core.ControlOf(r).EpochChain(), want) {
		t.Fatalf("%s: epoch chain %v, want %v", at, core.ControlOf(r).EpochChain(), want)
	}
}

// checkKinds checks that each frame's logged kind is what its bytes say: every reader that routes frames
// by kind (the `/acp` writer) then routes them as decoding would.
func checkKinds(t *testing.T, at string, entries []eventlog.Entry) {
	t.Helper()
	for _, e := range entries {
		var f struct {
			Method string `json:"method"`
			Params struct {
				Update struct {
					SessionUpdate string `json:"sessionUpdate"`
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal(e.Frame, &f); err != nil {
			t.Fatalf("%s: frame %d: %v", at, e.Seq, err)
		}
		want := eventlog.KindGateway
		switch {
		case f.Method == "session/update" && f.Params.Update.SessionUpdate == "user_message_chunk":
			want = eventlog.KindUserChunk
		case f.Method == "session/update":
			want = eventlog.KindUpdate
		case f.Method == "session/request_permission":
			want = eventlog.KindPermissionRequest
		case f.Method == "elicitation/create":
			want = eventlog.KindElicitationRequest
		case f.Method == "elicitation/complete":
			want = eventlog.KindElicitationComplete
		}
		if e.Kind != want {
			t.Fatalf("%s: frame %d (%s %s) logged as %v, want %v", at, e.Seq, f.Method, f.Params.Update.SessionUpdate, e.Kind, want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestRestoredSessionMatchesLive runs real turns of the demo agent (text, thoughts, plans, tool calls with
// diffs, permission requests answered, rejected, pending and cancelled, a mode and a config change, usage and
// a title) and checks after each step that a session rebuilt from the log knows what the live one knows.
func TestRestoredSessionMatchesLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := dlRegistry(t, Config{MaxTurnTextBytes: 64}) // the full turns' text is cut
		s := dlSession(t, r, PolicyAsk)
		defer s.Close("test over")
		ctx := context.Background()
		checkRestored(t, s, "new session")

		turn, err := s.Prompt(dlPrompt("quick"))
		if err != nil {
			t.Fatal(err)
		}
		<-turn.Done()
		checkRestored(t, s, "quick turn")

		turn, _ = s.Prompt(dlPrompt("edit the notes please"))
		p := dlPendingOne(t, s)
		checkRestored(t, s, "permission pending")
		if _, err := s.Answer(p.ID, dlSelect("allow-once"), "client"); err != nil {
			t.Fatal(err)
		}
		<-turn.Done()
		checkRestored(t, s, "permission allowed")

		if err := s.SetMode(ctx, "plan"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetConfigOption(ctx, "style", json.RawMessage(`"fancy"`)); err != nil {
			t.Fatal(err)
		}
		checkRestored(t, s, "mode and config changed")

		turn, _ = s.Prompt(dlPrompt("edit again"))
		p = dlPendingOne(t, s)
		if _, err := s.Answer(p.ID, dlSelect("reject-once"), "client"); err != nil {
			t.Fatal(err)
		}
		<-turn.Done()
		checkRestored(t, s, "permission rejected")

		turn, _ = s.Prompt(dlPrompt("edit, then I cancel"))
		dlPendingOne(t, s)
		if _, err := s.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
		<-turn.Done()
		checkRestored(t, s, "cancelled turn")

		turn, _ = s.Prompt(dlPrompt("edit until the deadline"))
		dlPendingOne(t, s)
		time.Sleep(6 * time.Minute)
		<-turn.Done()
		checkRestored(t, s, "deadline passed")
	})
}

// TestRestoredFailedTurnsMatchLive: a turn the agent fails with a JSON-RPC error (its answer left out of the
// replay, lastTurn.error), and a cancel the agent ignores (closers, the session failed with a reason).
func TestRestoredFailedTurnsMatchLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := NewRegistry(Config{Workdir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), CancelGrace: 10 * time.Second},
			[]agents.Spec{failingSpec(), stubbornSpec()}, "failing")
		if err != nil {
			t.Fatal(err)
		}
		s := dlSession(t, r, PolicyAsk)
		defer s.Close("test over")
		turn, _ := s.Prompt(dlPrompt("fail please"))
		if res := turn.Result(); res.Err == nil {
			t.Fatalf("the failing agent's turn ended %+v", res)
		}
		checkRestored(t, s, "failed turn")

		st, err := r.Create(context.Background(), CreateOptions{Agent: "stubborn"})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close("test over")
		turn, _ = st.Prompt(dlPrompt("run"))
		synctest.Wait()
		checkRestored(t, st, "turn running")
		if _, err := st.Cancel(context.Background()); err != nil {
			t.Fatal(err)
		}
		<-turn.Done()
		synctest.Wait()
		if st.Status() != store.StatusFailed {
			t.Fatalf("status %s after the ignored cancel", st.Status())
		}
		checkRestored(t, st, "cancel ignored, session failed")
	})
}

// failingAgent is an in-process ACP agent whose every turn sends a chunk and opens a tool call, then fails
// with a JSON-RPC error that carries data.
type failingAgent struct {
	acp.Agent // nil: the gateway calls nothing else
	conn      *acp.AgentSideConnection
	ctx       context.Context
}

func (a *failingAgent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber}, nil
}

func (a *failingAgent) NewSession(context.Context, acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	return acp.NewSessionResponse{SessionId: "failing"}, nil
}

func (a *failingAgent) Cancel(context.Context, acp.CancelNotification) error { return nil }

func (a *failingAgent) Prompt(_ context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	_ = a.conn.SessionUpdate(a.ctx, acp.SessionNotification{SessionId: p.SessionId, Update: acp.UpdateAgentMessageText("Partial answer")})
	_ = a.conn.SessionUpdate(a.ctx, acp.SessionNotification{SessionId: p.SessionId, Update: acp.StartToolCall("fail_1", "Call the model",
		acp.WithStartKind(acp.ToolKindFetch), acp.WithStartStatus(acp.ToolCallStatusInProgress))})
	return acp.PromptResponse{}, &acp.RequestError{Code: -32603, Message: "model overloaded", Data: map[string]any{"retryAfter": 30}}
}

func failingSpec() agents.Spec {
	return agents.Spec{Name: "failing", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		a := &failingAgent{ctx: ctx}
		ready := make(chan struct{})
		a.conn = acp.NewAgentSideConnection(a, out, gatedReader{in, ready})
		close(ready)
		select {
		case <-a.conn.Done():
		case <-ctx.Done():
		}
		if c, ok := in.(io.Closer); ok {
			c.Close()
		}
		<-a.conn.Done()
		return nil
	}}
}
