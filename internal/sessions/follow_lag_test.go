package sessions

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// gateSink blocks in Frame on each seq of gates until the test opens it; it records the frames it wrote.
type gateSink struct {
	gates   map[uint64]chan struct{} // seq → closed by the test to let the write finish
	entered chan uint64              // receives the seq of each gate entered
	waiting chan struct{}            // receives each time Wait is entered
	mu      sync.Mutex
	frames  []uint64 // Guarded by mu.
}

func (k *gateSink) Frame(seq uint64, _ []byte) error {
	if g, ok := k.gates[seq]; ok {
		k.entered <- seq
		<-g
	}
	k.mu.Lock()
	k.frames = append(k.frames, seq)
	k.mu.Unlock()
	return nil
}

func (k *gateSink) Note(string, any) error { return nil }

func (k *gateSink) Wait(wake <-chan struct{}) error {
	k.waiting <- struct{}{}
	<-wake
	return nil
}

// TestFollowBytesLagCheckedFrameByFrame: when the log grows by more than the byte bound while a write is stuck
// in the middle of a batch, the subscriber is evicted before its next frame, not after writing the rest of a
// batch it has fallen too far behind to deliver in time (an SSE client with big frames never was).
func TestFollowBytesLagCheckedFrameByFrame(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := core.BareSessionForTest("e", eventlog.NewLog(eventlog.LogLimits{}))
	core.ControlOf(s).SetRunner(&localRunner{s: s})
	appendSized(t, s.Log(), 1, 40)
	k := &gateSink{
		gates:   map[uint64]chan struct{}{2: make(chan struct{}), 3: make(chan struct{})},
		entered: make(chan uint64, 2),
		waiting: make(chan struct{}, 16),
	}
	done := make(chan error, 1)
	go func() { done <- s.Follow(s.StartAt(1, true, "e"), k, eventlog.FollowLimits{Bytes: 1000}) }()
	waitOrFail(t, k.waiting, "caught up at seq 1")
	appendSized(t, s.Log(), 1, 40) // seq 2: its write blocks
	if seq := <-k.entered; seq != 2 {
		t.Fatalf("blocked at %d", seq)
	}
	appendSized(t, s.Log(), 10, 40) // seqs 3..12: one batch, well within the bound
	close(k.gates[2])
	if seq := <-k.entered; seq != 3 { // the first frame of the batch 3..12 blocks
		t.Fatalf("blocked at %d", seq)
	}
	appendSized(t, s.Log(), 1, 2000) // seq 13: now more than 1000 bytes behind
	close(k.gates[3])
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Follow did not return")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !errors.Is(err, eventlog.ErrEvicted) || fmt.Sprint(k.frames) != "[2 3]" {
		t.Fatalf("Follow returned %v after frames %v; want %v after [2 3]", err, k.frames, eventlog.ErrEvicted)
	}
}
