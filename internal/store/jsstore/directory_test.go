package jsstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

func entry(id, status string) store.DirEntry {
	return store.DirEntry{ID: id, Agent: "demo", Status: store.Status(status), Epoch: "e1",
		CreatedAt: time.Unix(1, 0).UTC(), UpdatedAt: time.Unix(2, 0).UTC()}
}

// Two nodes claim one entry with the revision they both read: exactly one wins, the other gets ErrRevision.
func TestDirectoryCASRace(t *testing.T) {
	srv := natstest.Embedded(t)
	a := open(t, srv, jsstore.Options{}).Dir()
	b := open(t, srv, jsstore.Options{}).Dir() // a second node: its own connection
	ctx := ctxT(t)
	rev, err := a.Create(ctx, entry("s1", "idle"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, entry("s1", "idle")); !errors.Is(err, store.ErrRevision) {
		t.Fatalf("second Create: %v, want ErrRevision", err)
	}
	for round := range 20 {
		_, readRev, err := b.Get(ctx, "s1")
		if err != nil || readRev != rev {
			t.Fatalf("round %d: Get rev %d %v, want %d", round, readRev, err, rev)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		results := make([]error, 2)
		revs := make([]uint64, 2)
		for i, d := range []store.Directory{a, b} {
			wg.Go(func() {
				<-start
				e := entry("s1", "failed")
				e.Closer = []string{"a", "b"}[i]
				revs[i], results[i] = d.Update(ctx, e, rev)
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range results {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: both updaters won", round)
				}
				winner = i
			case !errors.Is(err, store.ErrRevision):
				t.Fatalf("round %d: updater %d: %v", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody won", round)
		}
		got, gotRev, err := a.Get(ctx, "s1")
		if err != nil || gotRev != revs[winner] || got.Closer != []string{"a", "b"}[winner] {
			t.Fatalf("round %d: entry %+v rev %d %v, want the winner's (rev %d)", round, got, gotRev, err, revs[winner])
		}
		rev = gotRev
	}
}

// Watch reports the current entries, then changes and deletions; Remove purges the log and deletes the entry.
func TestDirectoryWatchAndRemove(t *testing.T) {
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{})
	ctx := ctxT(t)
	if _, err := st.Dir().Create(ctx, entry("s1", "idle")); err != nil {
		t.Fatal(err)
	}
	type event struct {
		id, status string
		deleted    bool
	}
	events := make(chan event, 16)
	wctx, stop := context.WithCancel(ctx)
	watchDone := make(chan error, 1)
	go func() {
		watchDone <- st.Dir().Watch(wctx, func(e store.DirEntry, _ uint64, deleted bool) {
			events <- event{e.ID, string(e.Status), deleted}
		})
	}()
	expect := func(want event) {
		t.Helper()
		select {
		case got := <-events:
			if got != want {
				t.Fatalf("watch: %+v, want %+v", got, want)
			}
		case <-ctx.Done():
			t.Fatalf("watch: no %+v", want)
		}
	}
	expect(event{"s1", "idle", false})
	l := eventlog.NewLog(eventlog.LogLimits{})
	appendFrames(t, l, 1, 5, never)
	p := st.Persist("s1", "e1", l, 0)
	flush(t, p)
	p.Stop()
	if _, err := st.Dir().Create(ctx, entry("s2", "running")); err != nil {
		t.Fatal(err)
	}
	expect(event{"s2", "running", false})
	if err := st.Remove(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	expect(event{"s1", "", true})
	if _, _, err := st.Dir().Get(ctx, "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after Remove: %v, want ErrNotFound", err)
	}
	if stored, fence := feedAll(t, st, "s1"); len(stored) != 0 || fence != 0 {
		t.Fatalf("after Remove the log holds %d frames (fence %d)", len(stored), fence)
	}
	stop()
	if err := <-watchDone; err != nil {
		t.Fatalf("Watch returned %v after its context ended", err)
	}
}

// List returns every current entry with the revision Update needs, leaving out deleted ones; an empty bucket
// lists nothing (and returns: the end of the current entries is marked).
func TestDirectoryList(t *testing.T) {
	srv := natstest.Embedded(t)
	d := open(t, srv, jsstore.Options{}).Dir()
	ctx := ctxT(t)
	if got, _, err := d.List(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty List: %v, %v", got, err)
	}
	revs := map[string]uint64{}
	for _, id := range []string{"s1", "s2", "s3"} {
		rev, err := d.Create(ctx, entry(id, "idle"))
		if err != nil {
			t.Fatal(err)
		}
		revs[id] = rev
	}
	if err := d.Delete(ctx, "s2"); err != nil {
		t.Fatal(err)
	}
	got, gotRevs, err := d.List(ctx)
	if err != nil || len(got) != 2 {
		t.Fatalf("List: %d entries, %v", len(got), err)
	}
	for i, e := range got {
		if e.ID == "s2" || gotRevs[i] != revs[e.ID] {
			t.Fatalf("listed %s at revision %d (created at %d)", e.ID, gotRevs[i], revs[e.ID])
		}
		if _, err := d.Update(ctx, entry(e.ID, "detached"), gotRevs[i]); err != nil {
			t.Fatalf("Update with the listed revision: %v", err)
		}
	}
}
