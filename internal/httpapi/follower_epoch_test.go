package httpapi

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// clusterServer is one mode c node on srv (docs/cluster.md §5) with the REST face on a real HTTP server.
func clusterServer(t *testing.T, srv *natstest.Server, workdir, id string) (*jsstore.Store, string) {
	t.Helper()
	n := clusterAPINodeStart(t, srv, workdir, id)
	return n.st, n.base
}

// TestFollowerPageEpoch: a JSON events page on a follower names the epoch the log is in now, after the
// owner's log forked (here a re-attach), not the one the follower was loaded with: a client resumes with it.
func TestFollowerPageEpoch(t *testing.T) {
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	st, a := clusterServer(t, srv, workdir, "a")
	_, b := clusterServer(t, srv, workdir, "b")
	code, s := call(t, "POST", a+"/v1/sessions", `{}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, s)
	}
	id, first := s["id"].(string), s["epoch"].(string)
	var page map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for { // b loads its follower
		code, page = call(t, "GET", b+"/v1/sessions/"+id+"/events?after=0", "")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("page on b: %d %v", code, page)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if page["epoch"] != first {
		t.Fatalf("page on b before the fork: epoch %v, want %s", page["epoch"], first)
	}

	// The stored log forks in a new epoch, as a takeover forks it (docs/cluster.md §5).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var head uint64
	next := uuid.NewString()
	for attempt := 0; ; attempt++ { // the owner may still be storing a frame (the demo's commands): read again
		fence, err := st.Feed(ctx, id, false, func(f store.StoredFrame) error { head = f.Seq; return nil })
		if err != nil {
			t.Fatal(err)
		}
		frame := fmt.Sprintf(`{"jsonrpc":"2.0","method":"_gateway/session_status","params":{"status":"idle","_meta":{"gateway":{"seq":%d,"epoch":%q}}}}`, head+1, next)
		err = st.Fork(ctx, id, fence, []store.StoredFrame{{Seq: head + 1, Epoch: next, Frame: []byte(frame)}})
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrFenced) || attempt == 20 {
			t.Fatal(err)
		}
	}
	var now string
	deadline = time.Now().Add(10 * time.Second)
	for {
		_, v := call(t, "GET", b+"/v1/sessions/"+id, "")
		code, page = call(t, "GET", b+"/v1/sessions/"+id+"/events?after=0&limit=1000", "")
		now, _ = v["epoch"].(string)
		if code == 200 && now == next && page["headSeq"] == float64(head+1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b never saw the new epoch: %v, page %d %v", v, code, page)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if page["epoch"] != now {
		t.Fatalf("page on b after the fork: epoch %v, want the current %s (the first was %s)", page["epoch"], now, first)
	}
}
