package sessions_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// removeGateStore holds the owner's Remove of a closed session (the purge of its log and the deletion of its
// entry) until release is closed; removing is closed when it is called.
type removeGateStore struct {
	store.Store
	removing chan struct{}
	release  chan struct{}
	once     sync.Once
}

func (g *removeGateStore) Remove(ctx context.Context, sid string) error {
	g.once.Do(func() { close(g.removing) })
	select {
	case <-g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Store.Remove(ctx, sid)
}

// followGateStore tells (on started) when a follower's feed of sid starts after armed is set, and holds it
// until release is closed.
type followGateStore struct {
	store.Store
	mu      sync.Mutex
	armed   bool
	started chan struct{}
	release chan struct{}
}

func (g *followGateStore) Follow(ctx context.Context, sid string, fn func(store.StoredFrame) error, caughtUp func()) error {
	g.mu.Lock()
	armed := g.armed
	g.armed = false
	g.mu.Unlock()
	if armed {
		close(g.started)
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil
		}
	}
	return g.Store.Follow(ctx, sid, fn, caughtUp)
}

// TestClosedSessionIsGoneOnAFollower holds the interleaving behind TestFollowerServesAndRoutes' flake ("node b
// after the close: session is closed"): b's copy closed on the log's closed frame while b's directory watch
// still had an older entry of the session to deliver; that entry listed the session again as a new cold copy,
// whose load then met the entry's removal and answered session_closed (or, loaded first, served an empty
// session). A session closed through any node answers 404 there once the close returned.
func TestClosedSessionIsGoneOnAFollower(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	rg := &removeGateStore{removing: make(chan struct{}), release: make(chan struct{})}
	a := newClusterNodeWith(t, srv, workdir, "a", func(st store.Store) store.Store { rg.Store = st; return rg })
	gd := &gateDir{}
	fg := &followGateStore{started: make(chan struct{}), release: make(chan struct{})}
	b := newClusterNodeWith(t, srv, workdir, "b", func(st store.Store) store.Store {
		gd.Directory = st.Dir()
		fg.Store = &gateStore{Store: st, dir: gd}
		return fg
	})
	t.Cleanup(func() { close(fg.release) })
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

	// An entry of the session written before the close reaches b's watch only after it.
	r := gd.arm(s.ID)
	t.Cleanup(func() { gd.disarm(r) })
	if err := s.SetModeAs(ctx, alice, "plan"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.arrived:
	case <-ctx.Done():
		t.Fatal("the mode's entry did not reach b")
	}
	closed := make(chan error, 1)
	go func() { closed <- f.CloseAs(alice, "done") }()
	select {
	case <-rg.removing: // the closed frame is stored, the log not purged yet
	case <-ctx.Done():
		t.Fatal("the owner did not remove the session")
	}
	select {
	case <-f.Closed(): // b's copy folded the closed frame
	case <-ctx.Done():
		t.Fatal("the follower did not close on the closed frame")
	}
	close(rg.release)
	if err := <-closed; err != nil {
		t.Fatalf("close through b: %v", err)
	}
	r.proceed <- struct{}{} // the older entry
	select {
	case <-r.applied:
	case <-ctx.Done():
		t.Fatal("the older entry was not applied")
	}

	// The lookup; if it loads a copy, the entry's removal arrives while it loads.
	fg.mu.Lock()
	fg.armed = true
	fg.mu.Unlock()
	got := make(chan error, 1)
	go func() {
		_, err := b.reg.GetAs(alice, s.ID)
		got <- err
	}()
	select {
	case err = <-got:
	case <-fg.started:
		select {
		case <-r.arrived: // the removal
		case <-ctx.Done():
			t.Fatal("the removal did not reach b")
		}
		r.proceed <- struct{}{}
		select {
		case <-r.applied:
		case <-ctx.Done():
			t.Fatal("the removal was not applied")
		}
		err = <-got
	}
	if !errors.Is(err, sessionerr.ErrNotFound) {
		t.Fatalf("node b after the close: %v", err)
	}
	gd.disarm(r)
}

// splitRemoveStore removes a closed session's log (as the store's Remove does first), says so on purged, and
// removes the rest (the entry) once release is closed: a lookup on another node sees the moment between.
type splitRemoveStore struct {
	store.Store
	nc      *nats.Conn
	purged  chan struct{}
	release chan struct{}
}

func (g *splitRemoveStore) Remove(ctx context.Context, sid string) error {
	js, err := jetstream.New(g.nc)
	if err != nil {
		return err
	}
	st, err := js.Stream(ctx, "acpgw-log")
	if err != nil {
		return err
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSubject("acpgw.log."+sid)); err != nil {
		return err
	}
	close(g.purged)
	select {
	case <-g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Store.Remove(ctx, sid)
}

// TestClosingSessionIsGoneOnAnotherNode: a node that looks a session up while its owner removes it (the log
// purged, the entry not yet deleted) answers 404. It served an empty session, idle as its entry still said:
// the owner now marks the entry closed before it removes anything.
func TestClosingSessionIsGoneOnAnotherNode(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	nc := srv.Connect()
	sr := &splitRemoveStore{nc: nc, purged: make(chan struct{}), release: make(chan struct{})}
	a := newClusterNodeConnWith(t, nc, workdir, "a", func(st store.Store) store.Store { sr.Store = st; return sr })
	b := newClusterNode(t, srv, workdir, "b")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := a.reg.Create(ctx, sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	runTurn(t, s, alice, "quick")
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		s.Close("bye")
	}()
	select {
	case <-sr.purged:
	case <-ctx.Done():
		t.Fatal("the owner did not remove the session")
	}
	_, err = b.reg.GetAs(alice, s.ID)
	close(sr.release)
	<-closed
	if !errors.Is(err, sessionerr.ErrNotFound) {
		t.Fatalf("node b while the owner removes the session: %v, want not found", err)
	}
}
