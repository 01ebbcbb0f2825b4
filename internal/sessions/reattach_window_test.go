package sessions

import (
	"context"
	"strings"
	"testing"
)

// TestReattachKeepsUpdateBehindLoadAnswer: an update the agent sends right behind its session/load answer
// (real agents announce their commands then) is live, not replay: it is logged exactly once, while the
// replay before the answer stays out. The swallowing ends where the answer is on the wire, not when the
// gateway gets round to it.
func TestReattachKeepsUpdateBehindLoadAnswer(t *testing.T) {
	r := taRegistry(t, Config{}, "-after-load")
	s, err := r.Create(context.Background(), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 5 { // each re-attach is one more chance for the update to fall into the gap
		if !s.detach("test") {
			t.Fatal("detach refused")
		}
		// The update is on the wire before the prompt's answer, so it has been handled when the turn ends.
		taTurn(t, s, "1 1")
		n := 0
		for _, f := range dlLog(t, s) {
			if strings.Contains(f.Raw, `"after-load"`) {
				n++
			}
			if strings.Contains(f.Raw, "earlier") || strings.Contains(f.Raw, "replayed-1") {
				t.Fatalf("the agent's replay leaked into the log: %s", f.Raw)
			}
		}
		if n != round+1 {
			t.Fatalf("after %d re-attaches the log holds %d updates sent behind the load answer, want %d", round+1, n, round+1)
		}
	}
}
