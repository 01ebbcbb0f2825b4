package sessions

import (
	"fmt"
	"testing"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// chainSession is a session without an agent whose log holds frames 1..head under the epoch chain.
func chainSession(t *testing.T, chain []eventlog.EpochStart, first, head uint64) *Session {
	t.Helper()
	spec := agents.Spec{Name: "chain", Kind: agents.KindBuiltin}
	r, err := NewRegistry(Config{Workdir: t.TempDir()}, []agents.Spec{spec}, "chain")
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(r, "s1", spec, CreateOptions{Cwd: r.cfg.Workdir})
	t.Cleanup(core.ControlOf(s).CloseRoot)
	if len(chain) > 0 {
		s.Epoch = chain[len(chain)-1].Epoch
		core.ControlOf(s).SetEpochChain(chain)
	}
	for seq := first; seq <= head; seq++ {
		if err := s.Log().Put(seq, eventlog.KindUpdate, []byte(fmt.Sprintf(`{"seq":%d}`, seq))); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestStartAtEpochChain: a client resuming with an older epoch of the chain is replayed when everything it
// read lies before the next epoch began (those frames are the same in both); anything else about the epoch
// is epoch_changed, and the other rules (invalid cursor, truncation) still apply.
func TestStartAtEpochChain(t *testing.T) {
	one := []eventlog.EpochStart{{Epoch: "A", FirstSeq: 1}}
	three := []eventlog.EpochStart{{Epoch: "A", FirstSeq: 1}, {Epoch: "B", FirstSeq: 50}, {Epoch: "C", FirstSeq: 80}}
	for _, tc := range []struct {
		name        string
		chain       []eventlog.EpochStart
		first, head uint64
		after       uint64
		epoch       string
		resync      string
		cursor      uint64
	}{
		{"current epoch", one, 1, 100, 40, "A", "", 40},
		{"unknown epoch", one, 1, 100, 40, "Z", "epoch_changed", 100},
		{"no chain, other epoch", nil, 1, 100, 40, "A", "epoch_changed", 100},
		{"oldest link before the fork", three, 1, 100, 49, "A", "", 49},
		{"oldest link at the fork", three, 1, 100, 50, "A", "epoch_changed", 100},
		{"oldest link from the start", three, 1, 100, 0, "A", "", 0},
		{"middle link before the next fork", three, 1, 100, 79, "B", "", 79},
		{"middle link past the next fork", three, 1, 100, 85, "B", "epoch_changed", 100},
		{"current link", three, 1, 100, 90, "C", "", 90},
		{"current link past the head", three, 1, 100, 101, "C", "invalid_cursor", 100},
		{"older link, trimmed", three, 30, 100, 10, "A", "log_truncated", 100},
		{"older link, kept", three, 30, 100, 29, "A", "", 29},
		{"unknown epoch on a chain", three, 1, 100, 10, "Z", "epoch_changed", 100},
		{"no epoch given", three, 1, 100, 10, "", "", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := chainSession(t, tc.chain, tc.first, tc.head)
			st := s.StartAt(tc.after, true, tc.epoch)
			if st.Resync != tc.resync || st.Cursor != tc.cursor || st.HeadSeq != tc.head || st.EarliestSeq != tc.first {
				t.Fatalf("StartAt(%d, %q) = %+v, want resync %q cursor %d", tc.after, tc.epoch, st, tc.resync, tc.cursor)
			}
		})
	}
}
