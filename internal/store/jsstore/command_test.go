package jsstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// errorsByOp is the owner's handler of the tests: op "fail:<code>" fails with that sentinel (wrapped with a
// reason when Args say so), "agent" with an *AgentError, "echo" answers the command as it arrived.
func errorsByOp(ctx context.Context, cmd store.Command) store.Reply {
	if code, ok := strings.CutPrefix(cmd.Op, "fail:"); ok {
		for _, sc := range sessionerr.SentinelCodes() {
			if sc.Code == code {
				err := sc.Err
				if string(cmd.Args) == `"wrapped"` {
					err = fmt.Errorf("%w: agent exited with status 3", err)
				}
				return sessionerr.ReplyTo(nil, 9, err)
			}
		}
	}
	switch cmd.Op {
	case "agent":
		return sessionerr.ReplyTo(nil, 9, &sessionerr.AgentError{Op: "session/set_mode", Stderr: "trace",
			Err: &acp.RequestError{Code: -32602, Message: "Invalid params", Data: map[string]any{"modeId": "nope"}}})
	case "echo":
		return sessionerr.ReplyTo(cmd, 12, nil)
	case "block":
		<-ctx.Done()
		return sessionerr.ReplyTo(nil, 0, ctx.Err())
	}
	return sessionerr.ReplyTo(nil, 0, fmt.Errorf("%w: unknown op %q", sessionerr.ErrBadRequest, cmd.Op))
}

// pair joins an owner "a" serving errorsByOp and a caller "b" on one embedded server.
func pair(t testing.TB, srv *natstest.Server) (a, b *jsstore.Cluster) {
	t.Helper()
	a = join(t, open(t, srv, jsstore.Options{}), "a")
	if err := a.Serve(ctxT(t), errorsByOp); err != nil {
		t.Fatal(err)
	}
	return a, join(t, open(t, srv, jsstore.Options{}), "b")
}

// call is Call as the session core sees it: an error the owner replied with is returned as its sentinel.
func call(t testing.TB, c *jsstore.Cluster, node string, cmd store.Command) (store.Reply, error) {
	t.Helper()
	reply, err := c.Call(ctxT(t), node, cmd)
	if err == nil {
		err = sessionerr.ReplyErr(reply.Error)
	}
	return reply, err
}

// TestCallSentinelRoundTrip: for every sentinel of SentinelCodes, bare and wrapped, an error on the owner
// comes back on the caller as the same sentinel (errors.Is), with the same code, text and the reply's head.
func TestCallSentinelRoundTrip(t *testing.T) {
	t.Parallel()
	_, b := pair(t, natstest.Embedded(t))
	for _, sc := range sessionerr.SentinelCodes() {
		for _, args := range []string{`"bare"`, `"wrapped"`} {
			want := sc.Err
			if args == `"wrapped"` {
				want = fmt.Errorf("%w: agent exited with status 3", sc.Err)
			}
			reply, err := call(t, b, "a", store.Command{Op: "fail:" + sc.Code, SID: "s1", Args: json.RawMessage(args)})
			if !errors.Is(err, sc.Err) || err.Error() != want.Error() || sessionerr.ErrorCode(err) != sc.Code || reply.Head != 9 {
				t.Fatalf("%s %s: got %v (code %q, head %d), want %v", sc.Code, args, err, sessionerr.ErrorCode(err), reply.Head, want)
			}
		}
	}
}

// TestCallAgentErrorAndResult: an *AgentError crosses with its op, stderr and JSON-RPC error; a result
// crosses as the owner marshalled it, with the command (principal, args, bound) as the owner received it.
func TestCallAgentErrorAndResult(t *testing.T) {
	t.Parallel()
	_, b := pair(t, natstest.Embedded(t))
	_, err := call(t, b, "a", store.Command{Op: "agent"})
	var ae *sessionerr.AgentError
	var re *acp.RequestError
	if !errors.As(err, &ae) || ae.Op != "session/set_mode" || ae.Stderr != "trace" || !errors.As(err, &re) ||
		re.Code != -32602 || re.Message != "Invalid params" || sessionerr.ErrorCode(err) != sessionerr.CodeAgentError {
		t.Fatalf("agent error came back as %T %v", err, err)
	}
	who := principal.Principal{ID: "u1", Name: "Ann", Role: principal.RoleUser}
	sent := store.Command{Op: "echo", SID: "s1", Args: json.RawMessage(`{"text":"hi"}`), Principal: who, Bound: 3 * time.Second}
	reply, err := b.Call(ctxT(t), "a", sent)
	if err != nil {
		t.Fatal(err)
	}
	var got store.Command
	if err := json.Unmarshal(reply.Result, &got); err != nil {
		t.Fatal(err)
	}
	if got.Op != sent.Op || got.SID != sent.SID || string(got.Args) != string(sent.Args) || got.Principal != who ||
		got.Bound != sent.Bound || reply.Head != 12 {
		t.Fatalf("the owner received %+v (head %d), sent %+v", got, reply.Head, sent)
	}
}

// TestCallUnavailableTimeoutAndSize: no node listening is ErrOwnerUnavailable; an owner that does not answer
// within the bound plus RouteSlack is ErrOwnerTimeout; a bad node id is refused.
func TestCallUnavailableTimeoutAndSize(t *testing.T) {
	t.Parallel()
	_, b := pair(t, natstest.Embedded(t))
	if _, err := b.Call(ctxT(t), "nobody", store.Command{Op: "echo"}); !errors.Is(err, store.ErrOwnerUnavailable) {
		t.Fatalf("call to a node nobody serves: %v", err)
	}
	// The handler ends at the bound (its context), the caller's wait ends RouteSlack later: no reply wins the
	// race only if the owner's reply is lost, so a caller context shorter than both stands in for the bound.
	ctx, cancel := context.WithTimeout(ctxT(t), 50*time.Millisecond)
	defer cancel()
	if _, err := b.Call(ctx, "a", store.Command{Op: "block", Bound: time.Hour}); !errors.Is(err, store.ErrOwnerTimeout) {
		t.Fatalf("call to a blocked owner: %v", err)
	}
	if _, err := b.Call(ctxT(t), "a.b", store.Command{Op: "echo"}); !errors.Is(err, jsstore.ErrBadNodeID) {
		t.Fatalf("node id a.b: %v", err)
	}
}

// TestCallLargerThanMaxPayload: a command and a reply over the connection's max payload (1 MiB here) cross
// through the object store, whole, and leave nothing in it. They were refused (ErrCommandTooLarge), so a
// prompt the owner accepted failed through another node.
func TestCallLargerThanMaxPayload(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	_, b := pair(t, srv)
	big := json.RawMessage(`"` + strings.Repeat("x", 2<<20) + `"`)
	reply, err := b.Call(ctxT(t), "a", store.Command{Op: "echo", SID: "s1", Args: big})
	if err != nil {
		t.Fatalf("a 2 MiB command: %v", err)
	}
	var got store.Command
	if err := json.Unmarshal(reply.Result, &got); err != nil || string(got.Args) != string(big) || reply.Head != 12 {
		t.Fatalf("the 2 MiB echo came back as %d bytes of args (head %d): %v", len(got.Args), reply.Head, err)
	}
	js, err := jetstream.New(srv.Connect())
	if err != nil {
		t.Fatal(err)
	}
	obs, err := js.ObjectStore(ctxT(t), "acpgw-large")
	if err != nil {
		t.Fatal(err)
	}
	if list, err := obs.List(ctxT(t)); !errors.Is(err, jetstream.ErrNoObjectsFound) {
		t.Fatalf("objects left behind: %d, %v", len(list), err)
	}
}

// TestServeStopsOnClose: Close ends serving (later calls find no responder) and waits for a running handler.
func TestServeStopsOnClose(t *testing.T) {
	t.Parallel()
	a, b := pair(t, natstest.Embedded(t))
	done := make(chan error, 1)
	go func() {
		_, err := call(t, b, "a", store.Command{Op: "block", Bound: time.Hour})
		done <- err
	}()
	waitFor(t, "the blocking command to reach the owner", func() bool { return a.Running() == 1 })
	a.Close()
	if err := <-done; err == nil || err.Error() != context.Canceled.Error() || sessionerr.ErrorCode(err) != sessionerr.CodeInternal {
		t.Fatalf("the blocked call ended with %v, want the owner's context canceled", err)
	}
	if _, err := b.Call(ctxT(t), "a", store.Command{Op: "echo"}); !errors.Is(err, store.ErrOwnerUnavailable) {
		t.Fatalf("call after close: %v", err)
	}
}

// BenchmarkCall is one routed command's round trip (caller → owner → caller) on the embedded server.
func BenchmarkCall(b *testing.B) {
	_, caller := pair(b, natstest.Embedded(b))
	cmd := store.Command{Op: "echo", SID: "s1", Args: json.RawMessage(`{"text":"hi"}`)}
	ctx := ctxT(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := caller.Call(ctx, "a", cmd); err != nil {
			b.Fatal(err)
		}
	}
}

// TestServeWithoutDeadline: Serve for the life of the process (a context with no deadline) subscribes and
// answers; its flush once failed with "context requires a deadline".
func TestServeWithoutDeadline(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	a := join(t, open(t, srv, jsstore.Options{}), "a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := a.Serve(ctx, errorsByOp); err != nil {
		t.Fatalf("Serve without a deadline: %v", err)
	}
	b := join(t, open(t, srv, jsstore.Options{}), "b")
	if reply, err := b.Call(ctxT(t), "a", store.Command{Op: "echo", SID: "s1"}); err != nil || reply.Head != 12 {
		t.Fatalf("call: %+v, %v", reply, err)
	}
}

// TestServeUndecodableCommand: a command that does not decode is answered bad_request with its reason, and
// comes back on the caller as ErrBadRequest.
func TestServeUndecodableCommand(t *testing.T) {
	t.Parallel()
	srv := natstest.Embedded(t)
	pair(t, srv)
	msg, err := srv.Connect().RequestWithContext(ctxT(t), "acpgw.cmd.a", []byte("{not json"))
	if err != nil {
		t.Fatal(err)
	}
	var reply store.Reply
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		t.Fatal(err)
	}
	err = sessionerr.ReplyErr(reply.Error)
	if !errors.Is(err, sessionerr.ErrBadRequest) || !strings.HasPrefix(err.Error(), "bad request: command: ") {
		t.Fatalf("an undecodable command was answered %+v (%v)", reply.Error, err)
	}
}
