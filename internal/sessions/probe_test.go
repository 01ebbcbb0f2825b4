package sessions

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
	"go.uber.org/goleak"
)

// probeRegistry is a registry of one built-in agent, "a", served by serve.
func probeRegistry(t *testing.T, cfg Config, serve agents.BuiltinFunc) *Registry {
	t.Helper()
	cfg.Workdir = t.TempDir()
	r, err := NewRegistry(cfg, []agents.Spec{{Name: "a", Kind: agents.KindBuiltin, Builtin: serve}}, "a")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func shutdown(t *testing.T, r *Registry) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// TestConcurrentAgentInitShareOneProbe: callers asking at once for an agent not known yet all get its answer
// from one probe.
func TestConcurrentAgentInitShareOneProbe(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var starts atomic.Int32
	release := make(chan struct{})
	r := probeRegistry(t, Config{}, func(ctx context.Context, in io.Reader, out io.Writer) error {
		starts.Add(1)
		<-release // the probe stays running while the other callers arrive
		return demo.Serve(ctx, demo.Options{}, in, out)
	})
	var wg sync.WaitGroup
	var answered atomic.Int32
	for range 8 {
		wg.Go(func() {
			if ai, ok := r.AgentInit(context.Background(), "a"); ok && len(ai.Capabilities) > 0 {
				answered.Add(1)
			}
		})
	}
	waitUntil(t, func() bool { return starts.Load() == 1 })
	close(release)
	wg.Wait()
	if answered.Load() != 8 || starts.Load() != 1 {
		t.Errorf("%d of 8 callers got the answer; the agent was started %d times, want once", answered.Load(), starts.Load())
	}
	shutdown(t, r)
}

// TestProbeBoundedByStartTimeout: an agent that never answers initialize fails its probe after the start
// timeout; the failure is remembered (no second start), and the agent is stopped.
func TestProbeBoundedByStartTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var starts atomic.Int32
	r := probeRegistry(t, Config{StartTimeout: 50 * time.Millisecond, StopGrace: time.Second}, func(ctx context.Context, in io.Reader, out io.Writer) error {
		starts.Add(1)
		_, _ = io.Copy(io.Discard, in) // never answers; ends when its stdin is closed
		return nil
	})
	for i := range 2 {
		if _, ok := r.AgentInit(context.Background(), "a"); ok {
			t.Fatalf("AgentInit %d of a silent agent succeeded", i)
		}
	}
	if n := starts.Load(); n != 1 {
		t.Errorf("the agent was started %d times, want once (the failure is remembered)", n)
	}
	shutdown(t, r)
}

// TestShutdownEndsRunningProbe: Shutdown ends a probe still waiting for the agent (its start timeout far
// away), releases the caller, and returns once the agent is stopped.
func TestShutdownEndsRunningProbe(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	started := make(chan struct{})
	r := probeRegistry(t, Config{StartTimeout: time.Hour, StopGrace: time.Second}, func(ctx context.Context, in io.Reader, out io.Writer) error {
		close(started)
		_, _ = io.Copy(io.Discard, in)
		return nil
	})
	got := make(chan bool)
	go func() {
		_, ok := r.AgentInit(context.Background(), "a")
		got <- ok
	}()
	<-started
	shutdown(t, r)
	if <-got {
		t.Error("AgentInit succeeded although the probe was ended")
	}
	if _, ok := r.AgentInit(context.Background(), "a"); ok {
		t.Error("AgentInit after shutdown succeeded")
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
