package agentprobe

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
)

// TestCacheProbesOncePerConfiguration: callers asking at once share one probe; its answer serves until the
// agent's configuration changes, and a failure is remembered for the failure TTL.
func TestCacheProbesOncePerConfiguration(t *testing.T) {
	var probes atomic.Int32
	release := make(chan struct{})
	fail := atomic.Bool{}
	c := NewCache(func(ctx context.Context, spec agents.Spec) (AgentInit, *agents.Conn, string, error) {
		probes.Add(1)
		<-release
		if fail.Load() {
			return AgentInit{}, nil, "stderr", errors.New("no")
		}
		return AgentInit{Info: []byte(`{"name":"` + spec.Args[0] + `"}`)}, nil, "", nil
	}, time.Hour, slog.New(slog.DiscardHandler))
	spec := agents.Spec{Name: "a", Kind: agents.KindBuiltin, Args: []string{"one"}}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if ai, ok := c.Get(context.Background(), spec); !ok || string(ai.Info) != `{"name":"one"}` {
				t.Errorf("Get: %s %v", ai.Info, ok)
			}
		})
	}
	close(release)
	wg.Wait()
	if n := probes.Load(); n != 1 {
		t.Errorf("%d probes for one configuration, want 1", n)
	}
	if c.Known(spec) == nil {
		t.Error("the answer is not known after the probe")
	}
	fail.Store(true)
	changed := agents.Spec{Name: "a", Kind: agents.KindBuiltin, Args: []string{"two"}}
	if c.Known(changed) != nil {
		t.Error("an answer for another configuration is known")
	}
	for range 2 {
		if _, ok := c.Get(context.Background(), changed); ok {
			t.Error("a failed probe answered")
		}
	}
	if n := probes.Load(); n != 2 {
		t.Errorf("%d probes, want 2 (the failure is remembered)", n)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
