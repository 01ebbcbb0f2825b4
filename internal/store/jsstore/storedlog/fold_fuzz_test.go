package storedlog

import (
	"fmt"
	"testing"

	"github.com/acp-gateway/gateway/internal/store"
)

// streamFromOps turns fuzz bytes into what writers could leave in a session's subject: frames in order, some
// split into parts, duplicates (republish within or past the dedupe window), holes filled later, forks to a
// new epoch, and stale frames of a retired writer. held reports whether a hole is still open at the end, forked
// whether any fork happened: without either, nothing may be missing from the output.
func streamFromOps(ops []byte) (stream []Record, held, forked bool) {
	epochs := []string{"e0"}
	var seq uint64 // the writer's last seq
	var stash []Record
	var sent []Record
	emit := func(rs ...Record) { stream = append(stream, rs...); sent = append(sent, rs...) }
	for i, b := range ops {
		cur := epochs[len(epochs)-1]
		switch b % 8 {
		case 0, 1, 2:
			seq++
			emit(rec(cur, seq))
		case 3: // a frame stored as parts
			seq++
			n := 2 + int(b>>4)%3
			for p := 1; p <= n; p++ {
				emit(partRec(cur, seq, p, n))
			}
		case 4: // a duplicate of something already stored
			if len(sent) > 0 {
				emit(sent[int(b>>3)%len(sent)])
			}
		case 5: // a frame whose publish failed: it lands later
			seq++
			stash = append(stash, rec(cur, seq))
		case 6: // the republish fills the oldest hole
			if len(stash) > 0 {
				emit(stash[0])
				stash = stash[1:]
			}
		case 7: // a takeover forks at the writer's head + 1; the old writer may still land a stale frame
			if len(stash) > 0 {
				continue // a fork only follows a stored head
			}
			next := fmt.Sprintf("e%d", i+1)
			epochs = append(epochs, next)
			seq++
			emit(rec(next, seq))
			forked = true
			if b&8 != 0 {
				stream = append(stream, rec(cur, seq+uint64(b>>4)%3))
			}
		}
	}
	return stream, len(stash) > 0, forked
}

// FuzzFold checks the reader rule's invariants on any stream writers could leave: the output is one contiguous
// chain of seqs (each frame or gap starts right after the previous one ends), every frame's bytes are the ones
// stored for its (epoch, seq) — so reassembly is exact — epochs only move forward, and with every hole filled
// and no fork, every frame written comes out once, with no gap.
func FuzzFold(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 0, 6, 7, 0, 15, 0})
	f.Add([]byte{5, 5, 0, 0, 6, 6, 4, 12, 20})
	f.Add([]byte{3, 19, 35, 4, 12, 7, 0, 5, 3, 6})
	f.Add([]byte{0, 5, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		stream, held, forked := streamFromOps(ops)
		var out []store.StoredFrame
		fo := NewFolder(256, func(fr store.StoredFrame) error { out = append(out, fr); return nil })
		for _, r := range stream {
			if err := fo.fold(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := fo.Settle(); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		var last uint64
		for i, fr := range out {
			if i > 0 && fr.Seq != last+1 {
				t.Fatalf("output %d starts at %d after %d: %s", i, fr.Seq, last, show(out))
			}
			last = end(fr)
			if fr.GapTo == 0 && string(fr.Frame) != fmt.Sprintf("%s/%d", fr.Epoch, fr.Seq) {
				t.Fatalf("frame %d of %s holds %q", fr.Seq, fr.Epoch, fr.Frame)
			}
			if i > 0 && fr.Epoch != out[i-1].Epoch && seen[fr.Epoch] {
				t.Fatalf("epoch %s came back after a fork: %s", fr.Epoch, show(out))
			}
			seen[fr.Epoch] = true
		}
		if !held && !forked {
			var written uint64
			for _, r := range stream {
				written = max(written, r.Seq)
			}
			for _, fr := range out {
				if fr.GapTo > 0 {
					t.Fatalf("gap with every hole filled: %s", show(out))
				}
			}
			if last != written || (written > 0 && out[0].Seq != 1) {
				t.Fatalf("output ends at %d, %d written: %s", last, written, show(out))
			}
		}
	})
}
