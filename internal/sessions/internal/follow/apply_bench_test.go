package follow

import (
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
)

// benchHost is a Host of sessions without a registry, with the registry's default settings.
type benchHost struct{ cfg *core.SessionConfig }

func (h benchHost) SessionConfig() *core.SessionConfig { return h.cfg }
func (benchHost) Now() time.Time                       { return time.Now() }
func (benchHost) ShuttingDown() bool                   { return false }
func (benchHost) Reconfine(string) (*os.Root, error) {
	return nil, errors.New("no roots in a benchmark")
}
func (benchHost) EntryChanged(*core.Session) {}

// benchSession is a session without an agent, mid-turn, with the gateway's default log bounds.
func benchSession(b *testing.B) *core.Session {
	b.Helper()
	h := benchHost{&core.SessionConfig{
		Log: eventlog.LogLimits{MaxFrames: 10000, MaxBytes: 64 << 20}, Logger: slog.Default(), MaxTurnTextBytes: 1 << 20,
		CallTimeout: 30 * time.Second, CancelGrace: 10 * time.Second, PermissionTimeout: 5 * time.Minute, StopGrace: 2 * time.Second,
		MaxFSRequests: 16, MaxTerminalsPerSession: 8,
	}}
	spec := agents.Spec{Name: "bench", Kind: agents.KindBuiltin}
	s := core.MakeSession(h, "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", spec, core.MakeOptions{Cwd: b.TempDir(), OpenCwd: true})
	core.ControlOf(s).BeginTurnForTest("3a2b1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9", time.Now())
	return s
}

// floodParams is a flood agent's chunk as acp-go-sdk marshals it (256 B of text, `_meta` on the update).
var floodParams = []byte(`{"sessionId":"sess_0123456789abcdef","update":{"_meta":{"flood":{"i":4242,"sentNs":1767225600123456789}},"content":{"text":"` +
	strings.Repeat("x", 256) + `","type":"text"},"sessionUpdate":"agent_message_chunk"}}`)

// benchSink counts frames; Wait returns when the log wakes it.
type benchSink struct{ n int }

func (k *benchSink) Frame(uint64, []byte) error      { k.n++; return nil }
func (k *benchSink) Note(string, any) error          { return nil }
func (k *benchSink) Wait(wake <-chan struct{}) error { <-wake; return nil }

// BenchmarkApplyStored measures what a follower spends per frame of the owner's flood (mode c): a stored
// update folded into its copy (the log, the snapshot, the turn's text) and handed to one live subscriber.
func BenchmarkApplyStored(b *testing.B) {
	src := benchSession(b)
	src.SessionUpdate(floodParams)
	res, err := src.Log().Read(0, 1, nil)
	if err != nil || len(res.Entries) != 1 {
		b.Fatalf("source frame: %v", err)
	}
	frame := res.Entries[0].Frame
	s := benchSession(b)
	c := core.ControlOf(s)
	f := &Follower{s: s, progress: make(chan struct{})}
	c.SetRunner(Runner{f}) // its epoch is Epoch until the chain has a link, as a local session's
	st := s.StartAt(0, false, "")
	sink := &benchSink{}
	done := make(chan error, 1)
	go func() { done <- s.Follow(st, sink, eventlog.FollowLimits{}) }()
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	seq := uint64(0)
	for b.Loop() {
		seq++
		if err := f.applyStored(store.StoredFrame{Seq: seq, Epoch: s.Epoch, Frame: frame}); err != nil {
			b.Fatal(err)
		}
		c.Lock()
		c.RestartTurnTextForTest()
		c.Unlock()
	}
	s.Log().Close()
	<-done
}
