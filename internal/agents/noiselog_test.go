package agents

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordCounter is a slog.Handler that keeps every record it is handed.
type recordCounter struct {
	mu      sync.Mutex
	records []slog.Record // Guarded by mu.
}

func (h *recordCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordCounter) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordCounter) WithGroup(string) slog.Handler            { return h }
func (h *recordCounter) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.records = append(h.records, r.Clone())
	h.mu.Unlock()
	return nil
}

// TestNonJSONStdoutLinesAreSummarised: an agent printing 300 000 short non-JSON lines on stdout does not
// write 300 000 log records. The first few are logged at WARN, the rest are counted in summary records, and
// the counts add up to exactly the lines written.
func TestNonJSONStdoutLinesAreSummarised(t *testing.T) {
	const lines = 300000
	h := &recordCounter{}
	c, sid := startTestAgent(t, "noise", Options{Logger: slog.New(h)})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if stop, err := prompt(ctx, c, sid, "300000"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, err)
	}
	c.Stop() // the summary of what is left is logged when the connection ends

	h.mu.Lock()
	defer h.mu.Unlock()
	logged, summarised, records := 0, 0, 0
	for _, r := range h.records {
		if r.Level >= slog.LevelError {
			t.Errorf("logged at %s: %s", r.Level, r.Message)
		}
		switch {
		case strings.Contains(r.Message, "suppressed"):
			records++
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "suppressed" {
					summarised += int(a.Value.Int64())
				}
				return true
			})
		case strings.Contains(r.Message, "not JSON-RPC"):
			records++
			logged++
		}
	}
	t.Logf("%d log records in all; %d non-JSON lines logged one by one, %d summarised, in %d records", len(h.records), logged, summarised, records)
	if len(h.records) > 100 {
		t.Errorf("%d log records for %d non-JSON lines", len(h.records), lines)
	}
	if logged+summarised != lines {
		t.Errorf("logged %d + summarised %d = %d lines, want %d", logged, summarised, logged+summarised, lines)
	}
}

// TestNoiseSummaryPerInterval: while the noise goes on, one summary record per noiseLogInterval; the rest at
// the end.
func TestNoiseSummaryPerInterval(t *testing.T) {
	h := &recordCounter{}
	l := newNoiseLimiter(h)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const lines = 2500 // one every 10 ms: 25 s of noise
	for i := range lines {
		r := slog.NewRecord(start.Add(time.Duration(i)*10*time.Millisecond), slog.LevelError, "failed to parse incoming message", 0)
		if err := l.Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	l.flush()
	var counts []int64
	for _, r := range h.records[noiseLogFirst:] {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "suppressed" {
				counts = append(counts, a.Value.Int64())
			}
			return true
		})
	}
	// Counting starts at line 6 (t = 50 ms); summaries at t = 10.05 s and 20.05 s, then the flush.
	if want := []int64{1001, 1000, 494}; !slices.Equal(counts, want) {
		t.Fatalf("summaries %v, want %v", counts, want)
	}
}
