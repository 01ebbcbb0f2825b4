package agents

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// How much of an agent's stdout noise reaches the gateway's log. acp-go-sdk logs an ERROR for every stdout
// line it cannot parse; an agent printing 300 000 short lines would write 300 000 records. Clients still see
// the lines as bounded `_gateway/agent_output` frames (NoiseHandler); the log gets a sample and the counts.
const (
	noiseLogFirst    = 5                // lines logged one by one per agent connection
	noiseLogInterval = 10 * time.Second // at most one summary record per interval while the noise goes on
)

// sdkNoiseMessages are the SDK's log messages about an unusable stdout line.
var sdkNoiseMessages = map[string]bool{
	"failed to parse incoming message":            true,
	"received message with neither id nor method": true,
}

// noiseLimiter rate-limits the SDK's records about unusable stdout lines: the first noiseLogFirst are logged
// at WARN, later ones are counted and logged as one "N more … suppressed" record per noiseLogInterval, and
// whatever is still counted when the connection ends is logged by flush. Other records pass unchanged.
type noiseLimiter struct {
	slog.Handler             // Static after construction.
	state        *noiseCount // Static after construction; shared by the handlers WithAttrs derives.
}

type noiseCount struct {
	flushOnce sync.Once

	mu         sync.Mutex
	logged     int       // Guarded by mu.
	suppressed int       // Guarded by mu; lines counted since the last summary.
	since      time.Time // Guarded by mu; when the last summary was logged (or counting began).
}

func newNoiseLimiter(h slog.Handler) *noiseLimiter {
	return &noiseLimiter{Handler: h, state: &noiseCount{}}
}

func (h *noiseLimiter) Handle(ctx context.Context, r slog.Record) error {
	if !sdkNoiseMessages[r.Message] {
		return h.Handler.Handle(ctx, r)
	}
	s := h.state
	s.mu.Lock()
	if s.logged < noiseLogFirst {
		s.logged++
		last := s.logged == noiseLogFirst
		s.mu.Unlock()
		out := slog.NewRecord(r.Time, slog.LevelWarn, "agent stdout line is not JSON-RPC; ignored", r.PC)
		r.Attrs(func(a slog.Attr) bool { out.AddAttrs(a); return true })
		if last {
			out.AddAttrs(slog.String("note", "further such lines are counted, not logged"))
		}
		return h.Handler.Handle(ctx, out)
	}
	if s.suppressed == 0 && s.since.IsZero() {
		s.since = r.Time
	}
	s.suppressed++
	n := 0
	if r.Time.Sub(s.since) >= noiseLogInterval {
		n, s.suppressed, s.since = s.suppressed, 0, r.Time
	}
	s.mu.Unlock()
	if n == 0 {
		return nil
	}
	return h.Handler.Handle(ctx, summaryRecord(r.Time, n))
}

// flush logs the lines counted since the last summary. Called once the SDK's reader has ended.
func (h *noiseLimiter) flush() {
	s := h.state
	s.mu.Lock()
	n := s.suppressed
	s.suppressed = 0
	s.mu.Unlock()
	if n > 0 {
		_ = h.Handler.Handle(context.Background(), summaryRecord(time.Now(), n))
	}
}

func summaryRecord(t time.Time, n int) slog.Record {
	r := slog.NewRecord(t, slog.LevelWarn, "more agent stdout lines that are not JSON-RPC were suppressed", 0)
	r.AddAttrs(slog.Int("suppressed", n))
	return r
}

func (h *noiseLimiter) WithAttrs(as []slog.Attr) slog.Handler {
	return &noiseLimiter{Handler: h.Handler.WithAttrs(as), state: h.state}
}

func (h *noiseLimiter) WithGroup(name string) slog.Handler {
	return &noiseLimiter{Handler: h.Handler.WithGroup(name), state: h.state}
}
