package sessions

import (
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
)

// benchSession is a session without an agent, mid-turn, with the gateway's default log bounds: what
// SessionUpdate costs per agent update (translate, stamp, log append), without the SDK or the sockets.
func benchSession(b *testing.B) *Session {
	b.Helper()
	spec := agents.Spec{Name: "bench", Kind: agents.KindBuiltin}
	r, err := NewRegistry(Config{Workdir: b.TempDir(), Log: eventlog.LogLimits{MaxFrames: 10000, MaxBytes: 64 << 20}}, []agents.Spec{spec}, "bench")
	if err != nil {
		b.Fatal(err)
	}
	s := newSession(r, "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", spec, CreateOptions{Cwd: r.cfg.Workdir})
	core.ControlOf(s).BeginTurnForTest("3a2b1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9", time.Now())
	return s
}

// floodParams is a flood agent's chunk as acp-go-sdk marshals it (256 B of text, `_meta` on the update).
var floodParams = []byte(`{"sessionId":"sess_0123456789abcdef","update":{"_meta":{"flood":{"i":4242,"sentNs":1767225600123456789}},"content":{"text":"` +
	strings.Repeat("x", 256) + `","type":"text"},"sessionUpdate":"agent_message_chunk"}}`)

func BenchmarkSessionUpdate(b *testing.B) {
	for _, bc := range []struct {
		name   string
		params []byte
	}{
		{"floodChunk", floodParams},
		{"chunkWithParamsMeta", []byte(`{"sessionId":"a","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me read the file."},"messageId":"m1"},"_meta":{"traceparent":"00-x"}}`)},
		{"toolCallUpdate", []byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_01","status":"in_progress","_meta":{"claudeCode":{"toolName":"Read"}}}}`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := benchSession(b)
			if bc.name == "toolCallUpdate" {
				s.SessionUpdate([]byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"toolu_01","title":"Read","kind":"read","status":"pending"}}`))
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.params)))
			for b.Loop() {
				s.SessionUpdate(bc.params)
				core.ControlOf(s).RestartTurnTextForTest()
			}
		})
	}
}

// benchSink counts frames; Wait returns when the log wakes it.
type benchSink struct{ n int }

func (k *benchSink) Frame(uint64, []byte) error      { k.n++; return nil }
func (k *benchSink) Note(string, any) error          { return nil }
func (k *benchSink) Wait(wake <-chan struct{}) error { <-wake; return nil }

// BenchmarkFollowLive measures an update's way through the log to one live subscriber: append on this
// goroutine, Follow delivering on another (the face's writer), as in a flood.
func BenchmarkFollowLive(b *testing.B) {
	s := benchSession(b)
	c := core.ControlOf(s)
	st := s.StartAt(0, false, "")
	sink := &benchSink{}
	done := make(chan error, 1)
	go func() { done <- s.Follow(st, sink, eventlog.FollowLimits{}) }()
	b.ReportAllocs()
	for b.Loop() {
		s.SessionUpdate(floodParams)
		c.Lock()
		c.RestartTurnTextForTest()
		c.Unlock()
	}
	s.Log().Close()
	<-done
}
