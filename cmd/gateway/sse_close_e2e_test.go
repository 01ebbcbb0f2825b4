package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestSSEClosedOnceAfterDelete: closing a session ends its SSE stream with the logged
// `_gateway/session_status {status:"closed"}` event, and with nothing after it (no second, id-less copy).
func TestSSEClosedOnceAfterDelete(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	s := g.createSession(nil)
	st := g.openSSE(t, "/v1/sessions/"+s.ID+"/events", nil)
	st.until(isNote("_gateway/replay_complete"))
	if code := g.do("DELETE", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}
	var closed []sseEvent
	for ev := range st.ch { // the stream ends after the session's last frame
		if f, _ := parseWire(ev.Data); f.Method == "_gateway/session_status" && strings.Contains(string(ev.Data), `"closed"`) {
			closed = append(closed, ev)
		}
	}
	if len(closed) != 1 || closed[0].ID == "" {
		t.Fatalf("%d closed events (first id %q), want exactly the logged one (with an id)", len(closed), firstID(closed))
	}
}

func firstID(evs []sseEvent) string {
	if len(evs) == 0 {
		return ""
	}
	return evs[0].ID
}
