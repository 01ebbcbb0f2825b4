package main

import (
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childArgsEnv makes the test binary a gateway: its value is run's arguments, one a line.
const childArgsEnv = "GATEWAY_E2E_CHILD_ARGS"

// runChild runs the gateway until SIGINT/SIGTERM (or SIGKILL, which is the point).
func runChild(args string) int {
	ctx, stop := processContext() // as main's
	defer stop()
	if err := run(ctx, strings.Split(args, "\n"), func(string) string { return "" }, os.Stdout, os.Stderr); err != nil {
		return exitCode(err, os.Stderr)
	}
	return 0
}

// startChildGateway runs the gateway as a child process on a free port. exited is closed once the process
// has ended and been reaped.
func startChildGateway(t *testing.T, args ...string) (g *gateway, cmd *exec.Cmd, exited <-chan struct{}) {
	t.Helper()
	full := append([]string{"--addr", "127.0.0.1:0", "--demo-delay", "0", "--workdir", t.TempDir()}, args...)
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(full, "\n"))
	logs := &syncBuffer{}
	cmd.Stderr, cmd.Stdout = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	g = &gateway{t: t, logs: logs}
	deadline := time.Now().Add(60 * time.Second)
	for g.base == "" {
		if m := listenRE.FindStringSubmatch(logs.String()); m != nil {
			g.base = "http://" + m[1]
			break
		}
		select {
		case <-done:
			t.Fatalf("child gateway exited:\n%s", logs.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("child gateway did not log its address:\n%s", logs.String())
		}
	}
	return g, cmd, done
}

// TestDataDirKill9MidTurn: the gateway is killed (SIGKILL) while a turn waits for a permission. A WebSocket
// client recorded every frame and the test polled durableSeq. Restarted, the gateway serves every frame up to
// the last polled durableSeq byte for byte, closes the turn with restart frames in a new epoch, resumes the
// old epoch without a resync at or before the stored head and answers epoch_changed past it.
func TestDataDirKill9MidTurn(t *testing.T) {
	// One workdir for every start: a restart re-attaches only a cwd inside its own workspace roots.
	dir, workdir := t.TempDir(), t.TempDir()
	g1, child, exited := startChildGateway(t, "--data-dir", dir, "--workdir", workdir)
	s := g1.createSession(map[string]any{})
	live := g1.dial("/v1/sessions/" + s.ID + "/ws")
	if code := g1.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"prompt":[{"type":"text","text":"refactor the parser"}]}`, nil); code != http.StatusAccepted {
		t.Fatalf("prompt: %d", code)
	}
	req, _ := live.waitFor("the permission request", isPermissionRequest)
	var durable uint64
	deadline := time.Now().Add(30 * time.Second)
	for durable < req.Params.Meta.Gateway.Seq {
		var v struct {
			DurableSeq uint64 `json:"durableSeq"`
		}
		g1.do("GET", "/v1/sessions/"+s.ID, nil, &v)
		durable = v.DurableSeq
		if time.Now().After(deadline) {
			t.Fatalf("durableSeq %d never reached the permission request's seq %d", durable, req.Params.Meta.Gateway.Seq)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	live.waitClosed()
	// The process's files (its data dir lock among them) are released by the time it is reaped, not when
	// its sockets close: a restart after a kill -9 follows the exit, as a supervisor's does.
	<-exited
	seen := live.snapshot()
	if len(logged(seen)) == 0 {
		t.Fatal("the live client saw no logged frame")
	}

	g2 := startGateway(t, "--data-dir", dir, "--workdir", workdir)
	var v struct {
		Status      string `json:"status"`
		Epoch       string `json:"epoch"`
		LastSeq     uint64 `json:"lastSeq"`
		CurrentTurn any    `json:"currentTurn"`
		LastTurn    struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		} `json:"lastTurn"`
	}
	if code := g2.do("GET", "/v1/sessions/"+s.ID, nil, &v); code != http.StatusOK || v.Status != "detached" || v.CurrentTurn != nil ||
		v.LastTurn.Error.Message != "gateway restarted during the turn" || v.Epoch == s.Epoch {
		t.Fatalf("after the restart: %d %+v", code, v)
	}
	all := g2.dial("/v1/sessions/" + s.ID + "/ws")
	all.waitFor("the log's end", func(f frame) bool { return f.Params.Meta.Gateway.Seq == v.LastSeq })
	seen, replayed := logged(seen), logged(all.snapshot())
	for i, f := range seen {
		if f.Params.Meta.Gateway.Seq > durable {
			break
		}
		if string(replayed[i].Raw) != string(f.Raw) {
			t.Fatalf("frame %d after the restart:\n got %s\nwant %s", i, replayed[i].Raw, f.Raw)
		}
	}
	// The closing frames: a new epoch right after the stored head H.
	var h uint64
	byRestart, ended := false, false
	for _, f := range replayed {
		if f.Params.Meta.Gateway.Epoch == s.Epoch {
			h = f.Params.Meta.Gateway.Seq
			continue
		}
		if f.Params.Meta.Gateway.Epoch != v.Epoch || f.Params.Meta.Gateway.Seq <= h {
			t.Fatalf("closing frame out of place after H %d: %s", h, f.Raw)
		}
		byRestart = byRestart || f.Method == "_gateway/permission_resolved" && strings.Contains(string(f.Raw), `"by":"restart"`)
		ended = ended || f.Method == "_gateway/turn_ended" && strings.Contains(string(f.Raw), "gateway restarted during the turn")
	}
	if h < durable || !byRestart || !ended {
		t.Fatalf("H %d (durable seen %d), permission resolved by restart %v, turn ended %v\n%s", h, durable, byRestart, ended, all.dump())
	}
	// The old epoch at or before H resumes without a resync; past H it is epoch_changed.
	old := g2.dial("/v1/sessions/" + s.ID + "/ws?after=" + itoa(int(durable)) + "&epoch=" + s.Epoch)
	first, _ := old.waitFor("a frame", func(frame) bool { return true })
	if first.Method == "_gateway/resync_required" || first.Params.Meta.Gateway.Seq != durable+1 {
		t.Fatalf("old-epoch resume at %d: %s", durable, first.Raw)
	}
	past := g2.dial("/v1/sessions/" + s.ID + "/ws?after=" + itoa(int(h+1)) + "&epoch=" + s.Epoch)
	f, _ := past.waitFor("a frame", func(frame) bool { return true })
	if f.Method != "_gateway/resync_required" || !strings.Contains(string(f.Raw), "epoch_changed") {
		t.Fatalf("old-epoch resume past H: %s", f.Raw)
	}
}

// logged keeps the frames of the log (those with a seq), leaving out per-connection notes such as
// replay_complete.
func logged(fs []frame) []frame {
	var out []frame
	for _, f := range fs {
		if f.Params.Meta.Gateway.Seq > 0 {
			out = append(out, f)
		}
	}
	return out
}
