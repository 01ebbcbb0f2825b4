package jsstore

// byteBudget tracks the sizes of a session's newest stored messages that fit in max bytes, so the writer knows
// how many to keep when it purges the older ones. Owned by the writer goroutine.
type byteBudget struct {
	max      int64 // Static after construction.
	maxCount int   // Static after construction: the stream's per-subject message limit (0 = none).

	sizes   []int // the kept messages' sizes from sizes[head], oldest first
	head    int
	bytes   int64 // sum of the kept sizes
	dropped int   // messages out of the budget since the last purge
}

func (b *byteBudget) add(size int) {
	b.sizes = append(b.sizes, size)
	b.bytes += int64(size)
	for b.count() > 1 && b.bytes > b.max {
		b.bytes -= int64(b.sizes[b.head])
		b.head++
		b.dropped++
	}
	if b.maxCount > 0 && b.count() > b.maxCount { // the stream trims these itself
		b.bytes -= int64(b.sizes[b.head])
		b.head++
	}
	if b.head > len(b.sizes)/2 {
		b.sizes = append(b.sizes[:0], b.sizes[b.head:]...)
		b.head = 0
	}
}

func (b *byteBudget) count() int { return len(b.sizes) - b.head }

// purgeDue amortizes purges: one per eighth of the kept messages fallen out of the budget.
func (b *byteBudget) purgeDue() bool { return b.dropped > 0 && b.dropped >= b.count()/8 }

func (b *byteBudget) purged() { b.dropped = 0 }
