package sessions

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// TestDetailBuildsSnapshotWithoutTheSessionLock: while Detail builds its snapshot document (megabytes), the
// session lock is free, so the agent's notifications are appended meanwhile; the Detail still describes one
// seq, before them. Detail used to build the snapshot under the lock every agent update needs.
func TestDetailBuildsSnapshotWithoutTheSessionLock(t *testing.T) {
	r, err := NewRegistry(Config{Workdir: t.TempDir()}, []agents.Spec{floodSpec()}, "flood")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(textPrompt("3 1000"))
	if err != nil {
		t.Fatal(err)
	}
	<-turn.Done()

	lockFree, appended := false, uint64(0)
	core.ControlOf(s).SetBeforeSnapshotForTest(func() {
		if lockFree = core.ControlOf(s).TryLock(); !lockFree {
			return // an update now would wait for Detail
		}
		core.ControlOf(s).Unlock()
		s.SessionUpdate(json.RawMessage(`{"sessionId":"flood","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"while-building"}}}`))
		appended = s.Log().Head()
	})
	d := s.Detail()
	core.ControlOf(s).SetBeforeSnapshotForTest(nil)
	if !lockFree {
		t.Fatal("the session lock was held while the snapshot was built")
	}
	var snap struct {
		Seq uint64 `json:"seq"`
	}
	if err := json.Unmarshal(d.Snapshot, &snap); err != nil {
		t.Fatal(err)
	}
	if appended <= d.LastSeq || snap.Seq != d.LastSeq || strings.Contains(string(d.Snapshot), "while-building") ||
		!strings.Contains(string(d.Snapshot), "00000002") {
		t.Fatalf("detail at %d (snapshot seq %d) with an update appended at %d during it: %.300s", d.LastSeq, snap.Seq, appended, d.Snapshot)
	}
	if d2 := s.Detail(); d2.LastSeq != appended || !strings.Contains(string(d2.Snapshot), "while-building") {
		t.Fatalf("the next detail (at %d) misses the update appended at %d", d2.LastSeq, appended)
	}
}
