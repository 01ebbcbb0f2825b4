package jsstore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
)

const kill9ChildEnv = "JSSTORE_KILL9_CHILD_DIR"

// A process running mode b's embedded store is killed with SIGKILL mid-flood. Every frame it reported as
// acknowledged (Durable) is in the store when a new process opens the same directory, byte for byte: the file
// store writes before it acknowledges (docs/cluster.md §3). The child is this test binary in child mode.
func TestEmbeddedKill9KeepsAcknowledgedFrames(t *testing.T) {
	if dir := os.Getenv(kill9ChildEnv); dir != "" {
		kill9Child(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestEmbeddedKill9KeepsAcknowledgedFrames$", "-test.count=1")
	cmd.Env = append(os.Environ(), kill9ChildEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked uint64
	lines := bufio.NewScanner(out)
	for acked < 3000 && lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "durable "); ok {
			acked, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if acked < 3000 {
		t.Fatalf("the child reported %d acknowledged frames before it ended", acked)
	}

	nc, shutdown, _, err := jsstore.Embedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown()
	st, err := jsstore.Open(ctxT(t), nc, jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := feedAll(t, st, "s1")
	if uint64(len(stored)) < acked {
		t.Fatalf("after kill -9 the store holds %d frames; %d were acknowledged", len(stored), acked)
	}
	checkFrames(t, stored, "e1", uint64(len(stored)), never)
	t.Logf("acknowledged %d before kill -9, %d stored after", acked, len(stored))
}

// kill9Child floods a session into the embedded store on dir and prints Durable() after each flush, until it
// is killed.
func kill9Child(t *testing.T, dir string) {
	nc, shutdown, _, err := jsstore.Embedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st, err := jsstore.Open(ctx, nc, jsstore.Options{MaxLag: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 1000})
	p := st.Persist("s1", "e1", l, 0)
	defer p.Stop()
	for seq := uint64(1); ctx.Err() == nil; seq += 200 {
		appendFrames(t, l, seq, seq+199, never)
		if err := p.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Printf("durable %d\n", p.Durable()); err != nil {
			return // the parent is gone
		}
	}
}
