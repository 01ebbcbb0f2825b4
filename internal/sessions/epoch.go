package sessions

// EpochStart is one link of a session's epoch chain: the epoch under which frames from FirstSeq on were
// written. A session re-attached to a new agent process (docs/cluster.md §4) keeps its log and starts a new
// epoch at the next seq; the frames before it are byte-identical under both epochs.
type EpochStart struct {
	Epoch    string
	FirstSeq uint64
}

// setEpochChain sets the chain hydration rebuilt from the stored frames, oldest first; its last link is the
// current epoch (Session.Epoch). Called before the session is shared.
func (s *Session) setEpochChain(chain []EpochStart) { s.epochs = chain }

// CurrentEpoch is the epoch the session's log is in now, which clients resume with. It is Epoch, except on a
// follower whose owner's log forked since it was loaded (a takeover, docs/cluster.md §5): Epoch is static
// once a session is shared, the chain's last link is not.
func (s *Session) CurrentEpoch() string {
	if s.remote == nil {
		return s.Epoch
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epochLocked()
}

// epochLocked is CurrentEpoch with mu held.
func (s *Session) epochLocked() string {
	if s.remote != nil {
		if n := len(s.epochs); n > 0 {
			return s.epochs[n-1].Epoch // applyStored extends the chain under mu
		}
	}
	return s.Epoch
}

// sharesPrefix reports whether a client that read up to after under epoch (not the current one) holds
// frames the current epoch also has: epoch is an older link of the chain and after lies before the next
// link's first seq. The caller holds mu when the chain may grow (a follower).
func (s *Session) sharesPrefix(epoch string, after uint64) bool {
	for i, l := range s.epochs[:max(len(s.epochs)-1, 0)] {
		if l.Epoch == epoch {
			return after < s.epochs[i+1].FirstSeq
		}
	}
	return false
}
