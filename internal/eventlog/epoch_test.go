package eventlog

import "testing"

// TestSharesPrefix: an older epoch of the chain shares the frames before the next link began, and no other.
func TestSharesPrefix(t *testing.T) {
	chain := []EpochStart{{"A", 1}, {"B", 50}, {"C", 80}}
	for _, tc := range []struct {
		chain []EpochStart
		epoch string
		after uint64
		want  bool
	}{
		{chain, "A", 49, true},
		{chain, "A", 50, false},
		{chain, "B", 79, true},
		{chain, "B", 80, false},
		{chain, "C", 10, false}, // the current link is not a prefix
		{chain, "Z", 10, false},
		{nil, "A", 0, false},
	} {
		if got := SharesPrefix(tc.chain, tc.epoch, tc.after); got != tc.want {
			t.Errorf("SharesPrefix(%v, %q, %d) = %v, want %v", tc.chain, tc.epoch, tc.after, got, tc.want)
		}
	}
}
