package jsstore_test

import (
	"errors"
	"testing"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// A session id that is not one subject token would read or purge other sessions' logs ("*", ">") or none
// ("a.b"): every entry point refuses it with ErrBadSessionID and touches nothing.
func TestBadSessionIDs(t *testing.T) {
	srv := natstest.Embedded(t)
	st := open(t, srv, jsstore.Options{})
	ctx := ctxT(t)
	l := eventlog.NewLog(eventlog.LogLimits{})
	appendFrames(t, l, 1, 3, never)
	p := st.Persist("victim", "e1", l, 0)
	flush(t, p)
	p.Stop()
	for _, sid := range []string{"", "*", ">", "a.b", "a b", "victim.x", "é", string(make([]byte, 129))} {
		_, err := st.Feed(ctx, sid, false, func(store.StoredFrame) error { return nil })
		errs := map[string]error{
			"Feed":   err,
			"Fork":   st.Fork(ctx, sid, 0, nil),
			"Remove": st.Remove(ctx, sid),
			"Delete": st.Dir().Delete(ctx, sid),
		}
		_, _, errs["Get"] = st.Dir().Get(ctx, sid)
		_, errs["Create"] = st.Dir().Create(ctx, store.DirEntry{ID: sid})
		_, errs["Update"] = st.Dir().Update(ctx, store.DirEntry{ID: sid}, 1)
		for op, err := range errs {
			if !errors.Is(err, jsstore.ErrBadSessionID) {
				t.Errorf("%s(%q) = %v, want ErrBadSessionID", op, sid, err)
			}
		}
	}
	if stored, _ := feedAll(t, st, "victim"); len(stored) != 3 {
		t.Fatalf("the other session's log holds %d frames after the bad calls, want 3", len(stored))
	}
}
