package sessions

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"github.com/acp-gateway/gateway/internal/sessionerr"
	"github.com/acp-gateway/gateway/internal/store"
)

// TestNoFollowerAfterItsRemoval: a lookup that read another node's entry just before it was removed, and
// registers its follower after the watch applied the removal, registers none (it would have stayed listed,
// never closed); a follower from an entry newer than the removal is registered.
func TestNoFollowerAfterItsRemoval(t *testing.T) {
	spec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{}, in, out)
	}}
	r, err := NewRegistry(Config{Workdir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), NodeID: "b"}, []agents.Spec{spec}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	e := store.DirEntry{ID: "s1", Agent: "demo", Cwd: "/nowhere", Owner: "a", Status: store.StatusIdle, Epoch: "e1"}
	r.dirChanged(store.DirEntry{ID: "s1"}, 10, true) // the removal, at revision 10
	if _, err := r.addFollower(e, 7); !errors.Is(err, sessionerr.ErrNotFound) {
		t.Fatalf("a follower from revision 7, after the removal at 10: %v", err)
	}
	if len(r.followerList()) != 0 {
		t.Fatal("a follower of a removed session is listed")
	}
	if _, err := r.addFollower(e, 11); err != nil {
		t.Fatalf("a follower from a later entry: %v", err)
	}
}
