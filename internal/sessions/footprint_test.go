package sessions

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/agents/demo"
)

// heapInUse is the heap's in-use bytes after a full collection, as gwbench reads them
// (go_memstats_heap_inuse_bytes after /debug/pprof/heap?gc=1).
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestIdleDemoSessionHeap: an idle session with the in-process demo agent (two ACP connections, both ends in
// this process) holds at most 64 KiB of heap, measured as gwbench measures it, over many sessions so that
// the per-session cost dominates.
func TestIdleDemoSessionHeap(t *testing.T) {
	const n, maxKiB = 200, 64
	spec := agents.Spec{Name: "demo", Kind: agents.KindBuiltin, Builtin: func(ctx context.Context, in io.Reader, out io.Writer) error {
		return demo.Serve(ctx, demo.Options{}, in, out)
	}}
	r, err := NewRegistry(Config{Workdir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), MaxSessions: 0}, []agents.Spec{spec}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := r.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := r.Create(ctx, CreateOptions{}); err != nil { // warm up: lazily built shared state is not per session
		t.Fatal(err)
	}
	before := heapInUse()
	for range n {
		if _, err := r.Create(ctx, CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	after := heapInUse()
	perKiB := (float64(after) - float64(before)) / n / 1024
	t.Logf("heap per idle demo session: %.1f KiB", perKiB)
	if perKiB > maxKiB {
		t.Fatalf("heap per idle demo session %.1f KiB, want <= %d KiB", perKiB, maxKiB)
	}
}
