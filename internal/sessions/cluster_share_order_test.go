package sessions_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// gateStore hands its registry a directory whose watch the test holds back (gateDir, statusGateDir).
type gateStore struct {
	store.Store
	dir store.Directory
}

func (g *gateStore) Dir() store.Directory { return g.dir }

// gateDir holds the watch at the armed session's next change: it is sent on arrived, applied once the test
// sends on proceed, and applied is then signalled; later changes wait until the round is freed.
type gateDir struct {
	store.Directory
	mu    sync.Mutex
	round *gateRound // nil while disarmed
}

type gateRound struct {
	sid      string
	arrived  chan store.DirEntry
	proceed  chan struct{}
	applied  chan struct{}
	free     chan struct{}
	freeOnce sync.Once
}

func (g *gateDir) arm(sid string) *gateRound {
	r := &gateRound{sid: sid, arrived: make(chan store.DirEntry), proceed: make(chan struct{}), applied: make(chan struct{}), free: make(chan struct{})}
	g.mu.Lock()
	g.round = r
	g.mu.Unlock()
	return r
}

// disarm frees the round: the held changes go through.
func (g *gateDir) disarm(r *gateRound) {
	g.mu.Lock()
	if g.round == r {
		g.round = nil
	}
	g.mu.Unlock()
	r.freeOnce.Do(func() { close(r.free) })
}

func (g *gateDir) Watch(ctx context.Context, fn func(e store.DirEntry, rev uint64, deleted bool)) error {
	return g.Directory.Watch(ctx, func(e store.DirEntry, rev uint64, deleted bool) {
		g.mu.Lock()
		r := g.round
		g.mu.Unlock()
		if r == nil || r.sid != e.ID {
			fn(e, rev, deleted)
			return
		}
		select {
		case r.arrived <- e:
		case <-r.free:
			fn(e, rev, deleted)
			return
		}
		select {
		case <-r.proceed:
		case <-r.free:
		}
		fn(e, rev, deleted)
		select {
		case r.applied <- struct{}{}:
		case <-r.free:
		}
	})
}

// TestFollowerShareSurvivesAnOlderEntry: a share (then an unshare) made through node b is routed to the owner
// a and taken by b's copy at once; a directory change written before it, which b's watch delivers only after,
// must not undo it there. It did: b's copy took every entry's shares, so bob lost the share he had just been
// given (and got back the one just taken away) until the watch caught up.
func TestFollowerShareSurvivesAnOlderEntry(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	a := newClusterNode(t, srv, workdir, "a")
	gd := &gateDir{}
	b := newClusterNodeWith(t, srv, workdir, "b", func(st store.Store) store.Store {
		gd.Directory = st.Dir()
		return &gateStore{Store: st, dir: gd}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := a.reg.Create(ctx, sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.reg.GetAs(alice, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the follower idle", func() bool { return f.Status() == store.StatusIdle })

	for i, step := range []struct {
		mode string
		role store.ShareRole // "" = unshare
	}{{"plan", store.ShareViewer}, {"default", ""}} {
		r := gd.arm(s.ID)
		t.Cleanup(func() { gd.disarm(r) })
		// The owner writes its entry (the mode), still without this step's share change.
		if err := s.SetModeAs(ctx, alice, step.mode); err != nil {
			t.Fatal(err)
		}
		var older store.DirEntry
		select {
		case older = <-r.arrived:
		case <-ctx.Done():
			t.Fatalf("step %d: no directory change reached b", i)
		}
		if step.role != "" {
			err = f.ShareAs(alice, bob.ID, step.role)
		} else {
			err = f.UnshareAs(alice, bob.ID)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		want := step.role != ""
		if f.VisibleTo(bob) != want {
			t.Fatalf("step %d: right after the change through b, bob sees it: %v", i, !want)
		}
		r.proceed <- struct{}{}
		select {
		case <-r.applied:
		case <-ctx.Done():
			t.Fatalf("step %d: the older change was not applied", i)
		}
		if f.VisibleTo(bob) != want {
			t.Fatalf("step %d: an older directory change (shares %v) undid the change through b: bob sees it: %v", i, older.Shares, !want)
		}
		gd.disarm(r)
		eventually(t, "a's entry at b", func() bool { return f.VisibleTo(bob) == want && s.VisibleTo(bob) == want })
	}
}
