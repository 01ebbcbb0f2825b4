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

// sharesPrefix reports whether a client that read up to after under epoch (not the current one) holds
// frames the current epoch also has: epoch is an older link of the chain and after lies before the next
// link's first seq.
func (s *Session) sharesPrefix(epoch string, after uint64) bool {
	for i, l := range s.epochs[:max(len(s.epochs)-1, 0)] {
		if l.Epoch == epoch {
			return after < s.epochs[i+1].FirstSeq
		}
	}
	return false
}
