package jsstore_test

import (
	"fmt"
	"testing"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
)

// A feed through another server reads every frame a quorum acknowledged, although its consumer may sit on the
// replica that was not part of that quorum: a hydration or a takeover must not miss a log's last frames.
func TestFeedReadsWhatTheQuorumStoredR3(t *testing.T) {
	nc := startNATSCluster(t)
	writer, readers := nc.connect(t, 0), []*jsstore.Store{nc.connect(t, 1), nc.connect(t, 2)}
	for round := range 60 {
		sid := fmt.Sprintf("s%d", round)
		l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 100})
		p := writer.Persist(sid, fmt.Sprintf("e%d", round), l, 0) // msg-ids are epoch.seq: one epoch per log
		appendFrames(t, l, 1, 3, never)
		flush(t, p)
		p.Stop()
		for i, r := range readers {
			stored, fence := feedAll(t, r, sid)
			if len(stored) != 3 || fence == 0 {
				t.Fatalf("round %d, reader %d: fed %d frames (fence %d), want the 3 stored", round, i, len(stored), fence)
			}
		}
	}
}
