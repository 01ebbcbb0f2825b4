package jsstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// TestDirectoryListWhileEntriesChange: a restarted node lists the directory while the other nodes claim its
// entries. Every entry must be listed, also one rewritten during the list (a watch alone ended before the
// rewritten value arrived, and the restarted node never restored that session).
func TestDirectoryListWhileEntriesChange(t *testing.T) {
	srv := natstest.Embedded(t)
	d := open(t, srv, jsstore.Options{}).Dir()
	w := open(t, srv, jsstore.Options{}).Dir() // the other node: its own connection
	ctx := ctxT(t)
	const n = 100
	revs := make([]uint64, n)
	for i := range n {
		rev, err := d.Create(ctx, entry(fmt.Sprintf("s%03d", i), "idle"))
		if err != nil {
			t.Fatal(err)
		}
		revs[i] = rev
	}
	for round := range 30 {
		wctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { // rewrite every entry, in order, for as long as the list runs
			for i := 0; wctx.Err() == nil; i = (i + 1) % n {
				rev, err := w.Update(wctx, entry(fmt.Sprintf("s%03d", i), "failed"), revs[i])
				if err != nil {
					return
				}
				revs[i] = rev
			}
		})
		entries, _, err := d.List(ctx)
		stop()
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, e := range entries {
			seen[e.ID] = true
		}
		for i := range n {
			if id := fmt.Sprintf("s%03d", i); !seen[id] {
				t.Fatalf("round %d: the list of %d entries has no %s (%d listed)", round, n, id, len(entries))
			}
		}
	}
}
