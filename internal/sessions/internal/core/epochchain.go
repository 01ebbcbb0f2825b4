package core

import "github.com/acp-gateway/gateway/internal/eventlog"

// setEpochChain sets the chain hydration rebuilt from the stored frames, oldest first; its last link is the
// current epoch (Session.Epoch). Called before the session is shared.
func (s *Session) setEpochChain(chain []eventlog.EpochStart) { s.state.Epochs = chain }

// CurrentEpoch is the epoch the session's log is in now, which clients resume with. It is Epoch, except on a
// follower whose owner's log forked since it was loaded (a takeover, docs/cluster.md §5): Epoch is static
// once a session is shared, the chain's last link is not.
func (s *Session) CurrentEpoch() string { return s.run.CurrentEpoch() }

// epochLocked is CurrentEpoch with mu held.
func (s *Session) epochLocked() string { return s.run.EpochLocked() }

// lastEpochLocked is the chain's last link, or Epoch before the chain has one. The caller holds mu.
func (s *Session) lastEpochLocked() string {
	if n := len(s.state.Epochs); n > 0 {
		return s.state.Epochs[n-1].Epoch
	}
	return s.Epoch
}

// sharesPrefix is eventlog.SharesPrefix on the session's chain. The caller holds mu when the chain may grow
// (a follower).
func (s *Session) sharesPrefix(epoch string, after uint64) bool {
	return eventlog.SharesPrefix(s.state.Epochs, epoch, after)
}
