package sessions

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// blockingSink is a subscriber whose socket blocks: Frame blocks on the frame with seq blockAt until release
// is closed. It reports when it is waiting (caught up) and stops once it has caught up after the release.
type blockingSink struct {
	blockAt  uint64
	blocked  chan struct{} // closed when Frame(blockAt) is entered
	release  chan struct{}
	waiting  chan struct{} // receives each time Wait is entered
	mu       sync.Mutex
	frames   []uint64
	notes    []string
	released bool
}

var errCaughtUp = errors.New("caught up")

func newBlockingSink(at uint64) *blockingSink {
	return &blockingSink{blockAt: at, blocked: make(chan struct{}), release: make(chan struct{}), waiting: make(chan struct{}, 16)}
}

func (k *blockingSink) Frame(seq uint64, _ []byte) error {
	if seq == k.blockAt {
		close(k.blocked)
		<-k.release
		k.mu.Lock()
		k.released = true
		k.mu.Unlock()
	}
	k.mu.Lock()
	k.frames = append(k.frames, seq)
	k.mu.Unlock()
	return nil
}

func (k *blockingSink) Note(method string, _ any) error {
	k.mu.Lock()
	k.notes = append(k.notes, method)
	k.mu.Unlock()
	return nil
}

func (k *blockingSink) Wait(wake <-chan struct{}) error {
	k.mu.Lock()
	done := k.released
	k.mu.Unlock()
	if done {
		return errCaughtUp
	}
	k.waiting <- struct{}{}
	<-wake
	return nil
}

func appendSized(t *testing.T, l *eventlog.Log, n, size int) {
	t.Helper()
	for range n {
		if _, err := l.Append(eventlog.KindUpdate, func(seq uint64) ([]byte, error) {
			return fmt.Appendf(nil, `{"seq":%d,"pad":"%s"}`, seq, strings.Repeat("p", max(size-30, 0))), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFollowLagCountsWhatArrivedWhileBlocked: a subscriber whose write blocks (a full TCP buffer) while the log
// grows has fallen behind by everything appended meanwhile. The lag check after the write must see that lag
// (eviction past the bound, the slow_client warning at 75 %), not the head as it was when the blocked batch was
// read. Otherwise a client is never evicted, nor warned, unless a single read leaves more than 256 frames
// behind, whatever --ws-queue-frames / --ws-queue-bytes say.
func TestFollowLagCountsWhatArrivedWhileBlocked(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lim       eventlog.FollowLimits
		n, size   int
		wantErr   error
		wantNotes []string
	}{
		{"frames past the bound", eventlog.FollowLimits{Frames: 8}, 100, 40, eventlog.ErrEvicted, nil},
		{"bytes past the bound", eventlog.FollowLimits{Bytes: 1000}, 50, 100, eventlog.ErrEvicted, nil},
		{"warned at 75 percent", eventlog.FollowLimits{Frames: 100}, 80, 40, errCaughtUp, []string{"_gateway/slow_client"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			s := core.BareSessionForTest("e", eventlog.NewLog(eventlog.LogLimits{}))
			core.ControlOf(s).SetRunner(&localRunner{s: s})
			appendSized(t, s.Log(), 1, 40)
			k := newBlockingSink(2)
			done := make(chan error, 1)
			go func() { done <- s.Follow(s.StartAt(1, true, "e"), k, tc.lim) }()
			waitOrFail(t, k.waiting, "caught up at seq 1")
			appendSized(t, s.Log(), 1, 40) // seq 2: its write blocks
			waitOrFail(t, k.blocked, "write of seq 2")
			appendSized(t, s.Log(), tc.n, tc.size) // the log grows while the socket is stuck
			close(k.release)
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Follow did not return")
			}
			k.mu.Lock()
			defer k.mu.Unlock()
			notes := k.notes[1:] // [0] is replay_complete
			if !errors.Is(err, tc.wantErr) || fmt.Sprint(notes) != fmt.Sprint(tc.wantNotes) {
				t.Fatalf("Follow returned %v with notes %v after sending %d frames; want %v with notes %v",
					err, notes, len(k.frames), tc.wantErr, tc.wantNotes)
			}
		})
	}
}

func waitOrFail(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestFollowReplayOfHistoryIsNotLag: a subscriber that resumes far behind (replaying history) is not evicted
// for it, however small the bound.
func TestFollowReplayOfHistoryIsNotLag(t *testing.T) {
	s := core.BareSessionForTest("e", eventlog.NewLog(eventlog.LogLimits{}))
	core.ControlOf(s).SetRunner(&localRunner{s: s})
	appendSized(t, s.Log(), 2000, 100)
	k := &dlSink{stopAt: func(m string) bool { return m == "_gateway/replay_complete" }}
	err := s.Follow(s.StartAt(0, true, "e"), k, eventlog.FollowLimits{Frames: 4, Bytes: 500})
	if !errors.Is(err, errDLSinkDone) || len(k.frames) != 2000 {
		t.Fatalf("replay: %v after %d frames, notes %v", err, len(k.frames), k.notes)
	}
}
