package sessions

import (
	"context"
	"testing"

	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// TestRestoredSessionGoesOnInTheLogsEpoch: a session rebuilt from its frames is in the epoch its frames
// carry, whatever newSession drew: a client resuming with that epoch and its last seq is not resynced, and
// what the session logs next continues that epoch. Before, a restored session kept the fresh epoch of
// newSession unless its caller knew to copy the stored one, and every client got epoch_changed.
func TestRestoredSessionGoesOnInTheLogsEpoch(t *testing.T) {
	r := taRegistry(t, Config{})
	live, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	taTurn(t, live, "2 3")
	res, err := live.Log().Read(0, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs := newSession(r, live.ID, core.ControlOf(live).AgentSpec(), CreateOptions{Cwd: live.Cwd, PermissionPolicy: live.Policy})
	defer core.ControlOf(rs).CloseRoot()
	if err := core.ControlOf(rs).RestoreFrom(res.Entries, DirView{}); err != nil {
		t.Fatal(err)
	}
	if rs.Epoch != live.Epoch {
		t.Fatalf("restored epoch %q, the log's is %q", rs.Epoch, live.Epoch)
	}
	_, head := live.Log().Bounds()
	if st := rs.StartAt(head, true, live.Epoch); st.Resync != "" {
		t.Fatalf("a client at the head of the stored epoch gets %q", st.Resync)
	}
}
