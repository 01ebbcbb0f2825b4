package eventlog

// EpochStart is one link of a session's epoch chain: the epoch under which frames from FirstSeq on were
// written. A session re-attached to a new agent process (docs/cluster.md §4) keeps its log and starts a new
// epoch at the next seq; the frames before it are byte-identical under both epochs.
type EpochStart struct {
	Epoch    string
	FirstSeq uint64
}

// SharesPrefix reports whether a client that read up to after under epoch (not the chain's current one)
// holds frames the current epoch also has: epoch is an older link of chain and after lies before the next
// link's first seq.
func SharesPrefix(chain []EpochStart, epoch string, after uint64) bool {
	for i, l := range chain[:max(len(chain)-1, 0)] {
		if l.Epoch == epoch {
			return after < chain[i+1].FirstSeq
		}
	}
	return false
}
