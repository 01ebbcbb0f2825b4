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

// heldIdleDir holds every directory write of an entry that says idle until release: the owner's
// directory then says starting, whatever its log holds.
type heldIdleDir struct {
	store.Directory
	held     chan string // the id of each entry held, once
	free     chan struct{}
	freeOnce sync.Once
}

func (d *heldIdleDir) release() { d.freeOnce.Do(func() { close(d.free) }) }

func (d *heldIdleDir) hold(ctx context.Context, e store.DirEntry) error {
	if e.Status != store.StatusIdle {
		return nil
	}
	select {
	case d.held <- e.ID:
	default:
	}
	select {
	case <-d.free:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *heldIdleDir) Create(ctx context.Context, e store.DirEntry) (uint64, error) {
	if err := d.hold(ctx, e); err != nil {
		return 0, err
	}
	return d.Directory.Create(ctx, e)
}

func (d *heldIdleDir) Update(ctx context.Context, e store.DirEntry, rev uint64) (uint64, error) {
	if err := d.hold(ctx, e); err != nil {
		return 0, err
	}
	return d.Directory.Update(ctx, e, rev)
}

// TestFollowerTakesIdleFromTheLogWithTheEntryHeld: the owner's directory write that says idle is held back,
// so b's copy has only the log to go by. The copy's status comes from the frames: it goes from starting to
// idle as the owner's does. It stayed starting while the entry was held, when starting → idle was not logged.
func TestFollowerTakesIdleFromTheLogWithTheEntryHeld(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	hd := &heldIdleDir{held: make(chan string, 1), free: make(chan struct{})}
	a := newClusterNodeWith(t, srv, workdir, "a", func(st store.Store) store.Store {
		hd.Directory = st.Dir()
		return &gateStore{Store: st, dir: hd}
	})
	b := newClusterNode(t, srv, workdir, "b")
	t.Cleanup(hd.release) // registered after the nodes' cleanups: runs before them
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := a.reg.Create(ctx, sessions.CreateOptions{Owner: alice})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st != store.StatusIdle {
		t.Fatalf("the owner's session is %s", st)
	}
	select {
	case id := <-hd.held:
		if id != s.ID {
			t.Fatalf("held the entry of %s, want %s", id, s.ID)
		}
	case <-ctx.Done():
		t.Fatal("the owner wrote no idle entry")
	}
	e, _, err := a.st.Dir().Get(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if e.Status != store.StatusStarting {
		t.Fatalf("the directory says %s while the idle entry is held", e.Status)
	}
	f, err := b.reg.GetAs(alice, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "b's copy idle", func() bool { return f.Status() == store.StatusIdle })
	if v := f.View(); v.Status != store.StatusIdle {
		t.Fatalf("b's view says %s", v.Status)
	}
	hd.release()
}
