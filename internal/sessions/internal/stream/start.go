package stream

// StartFrom is where a subscriber that read up to after resumes on a log holding first..head: from after,
// or a resync to the head when its epoch changed, its cursor is past the head, or the log no longer holds
// after+1.
func StartFrom(first, head, after uint64, epochChanged bool) Start {
	st := Start{Cursor: after, ReplayUntil: head, EarliestSeq: first, HeadSeq: head}
	switch {
	case epochChanged:
		st.Resync = "epoch_changed"
	case after > head:
		st.Resync = "invalid_cursor"
	case after+1 < first:
		st.Resync = "log_truncated"
	}
	if st.Resync != "" {
		st.Cursor = head
	}
	return st
}
