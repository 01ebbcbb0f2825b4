package sessions_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
)

// Another node appends to a session's log behind its owner's back (a takeover the owner has not heard of, as
// after a pause): the owner's next write is refused by the store, and the owner stands the session down on
// that alone (its directory entry still names it). Nothing it wrote after the fork is stored.
func TestFencedOwnerStandsDown(t *testing.T) {
	a, b := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := a.reg.Create(ctx, sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "a's log stored", func() bool {
		v := s.View()
		return v.Status == store.StatusIdle && v.DurableSeq != nil && *v.DurableSeq == s.Log().Head()
	})
	subDone := make(chan error, 1)
	go func() { subDone <- s.Follow(s.StartAt(0, false, ""), nullSink{}, eventlog.FollowLimits{}) }()

	// b forks the log in a new epoch after the stored head (again if a frame of a lands meanwhile).
	var h uint64
	for attempt := 0; ; attempt++ {
		h = 0
		fence, err := b.st.Feed(ctx, s.ID, false, func(f store.StoredFrame) error { h = max(h, f.Seq, f.GapTo); return nil })
		if err != nil {
			t.Fatal(err)
		}
		forked := []byte(`{"jsonrpc":"2.0","method":"_gateway/session_status","params":{"sessionId":"` + s.ID +
			`","status":"failed","reason":"node_lost","_meta":{"gateway":{"seq":` + itoa(h+1) + `,"epoch":"other"}}}}`)
		err = b.st.Fork(ctx, s.ID, fence, []store.StoredFrame{{Seq: h + 1, Epoch: "other", Frame: forked}})
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrFenced) || attempt == 10 {
			t.Fatalf("fork: %v", err)
		}
	}

	// a writes again (unless a late frame of its own was refused first): the store refuses it and a stands the
	// session down.
	if _, err := s.PromptAs(alice, prompt("quick")); err != nil && !errors.Is(err, sessionerr.ErrShutdown) && !errors.Is(err, sessionerr.ErrFailed) {
		t.Fatalf("prompt on a: %v", err)
	}
	select {
	case <-s.Closed():
	case <-ctx.Done():
		t.Fatal("a did not stand the fenced session down")
	}
	select {
	case err := <-subDone:
		if !errors.Is(err, sessionerr.ErrStoodDown) {
			t.Fatalf("a's subscriber ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("a's subscriber did not end")
	}
	if v := s.View(); v.Status != store.StatusFailed || v.StatusReason != sessions.ReasonNodeLost {
		t.Fatalf("a's fenced session: %s %s", v.Status, v.StatusReason)
	}
	js, err := jetstream.New(b.nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, "acpgw-log")
	if err != nil {
		t.Fatal(err)
	}
	subject := "acpgw.log." + s.ID
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Subjects[subject]; n != h+1 {
		t.Fatalf("%d messages stored for the session, want its %d frames and the fork's one", n, h)
	}
}
