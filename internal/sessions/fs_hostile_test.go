package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/principal"
)

// These tests run internal/testagent in its fs mode (testagent/fs.go) as a real agent process that does the
// hostile thing itself — makes a FIFO, a sparse file, a hard link to a file outside its cwd — and asks the
// gateway to serve fs/* on it.

// fsStep is one step of the test agent's fs mode; fsResult its result.
type fsStep struct {
	Op          string `json:"op"`
	Path        string `json:"path,omitempty"`
	From        string `json:"from,omitempty"`
	Content     string `json:"content,omitempty"`
	Line        *int   `json:"line,omitempty"`
	Limit       *int   `json:"limit,omitempty"`
	Size        int64  `json:"size,omitempty"`
	Times       int    `json:"times,omitempty"`
	SignalAfter int    `json:"signalAfter,omitempty"`
}

type fsResult struct {
	Op      string          `json:"op"`
	Content *string         `json:"content"`
	Code    int             `json:"code"`
	Data    json.RawMessage `json:"data"`
	Answers map[string]int  `json:"answers"`
	Err     string          `json:"err"`
}

// fsAgentSession makes a session of the fs-mode test agent whose cwd is <workdir>/proj; outside is
// <workdir>/outside, a directory beside it.
func fsAgentSession(t *testing.T) (s *Session, cwd, outside string) {
	t.Helper()
	r := taRegistry(t, Config{}, "-mode", "fs")
	cwd = filepath.Join(r.cfg.Workdir, "proj")
	outside = filepath.Join(r.cfg.Workdir, "outside")
	for _, d := range []string{cwd, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := r.Create(context.Background(), CreateOptions{Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	return s, cwd, outside
}

// fsTurn runs steps as one prompt and returns their results.
func fsTurn(t *testing.T, s *Session, steps ...fsStep) []fsResult {
	t.Helper()
	b, _ := json.Marshal(steps)
	res := taTurn(t, s, string(b))
	var out []fsResult
	if err := json.Unmarshal([]byte(res.Text), &out); err != nil || len(out) != len(steps) {
		t.Fatalf("fs agent answered %q (%v)", res.Text, err)
	}
	for i, r := range out {
		if r.Err != "" {
			t.Fatalf("step %d (%s): the agent failed: %s", i, r.Op, r.Err)
		}
	}
	return out
}

func (r fsResult) String() string {
	b, _ := json.Marshal(r)
	return string(b)
}

func intp(n int) *int { return &n }

// TestFSRefusesAFIFO: an agent makes a FIFO in its cwd and asks the gateway to read it and to write to one.
// The gateway must not open either blocking (each such open held an OS thread until someone opened the other
// end; enough of them ended the process with "thread exhaustion"): it refuses both with -32602. The agent
// waits on the FIFO's other end, so a gateway that blocks in open meets it and answers what went through —
// the defect shows as a wrong answer, not a hang.
func TestFSRefusesAFIFO(t *testing.T) {
	s, cwd, _ := fsAgentSession(t)
	res := fsTurn(t, s,
		fsStep{Op: "fiforead", Path: filepath.Join(cwd, "ff")},
		fsStep{Op: "fifowrite", Path: filepath.Join(cwd, "fw"), Content: "through the gateway"},
		fsStep{Op: "write", Path: filepath.Join(cwd, "plain.txt"), Content: "fine"},
		fsStep{Op: "read", Path: filepath.Join(cwd, "plain.txt")},
	)
	for i, what := range []string{"a read of a FIFO", "a write to a FIFO"} {
		if r := res[i]; r.Code != -32602 || r.Content != nil || !bytes.Contains(r.Data, []byte("not a regular file")) {
			t.Errorf("%s answered %s, want -32602 \"not a regular file\" and nothing through the FIFO", what, r)
		}
	}
	if r := res[3]; r.Content == nil || *r.Content != "fine" {
		t.Errorf("a regular file after the FIFOs: %s", r)
	}
}

// TestFSLineLimitReadsOnlyTheSelection: fs/read_text_file with line/limit reads the file line by line and
// stops after the selection (it used to read the whole file into memory: a 1 GiB sparse file read with
// {line: 1, limit: 1} took the gateway to 2.1 GB). A selection that does not end within the scan bound, or
// is larger than the read bound, is refused without reading further. The gateway runs in this process, so
// what it allocated is measured directly.
func TestFSLineLimitReadsOnlyTheSelection(t *testing.T) {
	s, cwd, _ := fsAgentSession(t)
	big := filepath.Join(cwd, "big.txt")
	const size = 256 << 20
	fsTurn(t, s, fsStep{Op: "sparse", Path: big, Content: "first\nsecond\n", Size: size})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := fsTurn(t, s,
		fsStep{Op: "read", Path: big, Line: intp(1), Limit: intp(1)},
		fsStep{Op: "read", Path: big, Line: intp(2), Limit: intp(1)},
		fsStep{Op: "read", Path: big, Line: intp(3), Limit: intp(1)}, // one line of 256 MiB - 13 zero bytes
		fsStep{Op: "read", Path: big, Line: intp(4)},                 // past a line longer than the scan bound
		fsStep{Op: "read", Path: big},
	)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("the reads allocated %d MiB", allocated>>20)
	if allocated > 16<<20 {
		t.Errorf("reading two short lines and refusing three selections of a %d MiB file allocated %d MiB", size>>20, allocated>>20)
	}
	for i, want := range []string{"first\n", "second\n"} {
		if r := res[i]; r.Content == nil || *r.Content != want {
			t.Errorf("line %d: %s, want %q", i+1, r, want)
		}
	}
	for i, want := range []string{"selection is larger than", "more than", "file is larger than"} {
		if r := res[2+i]; r.Code != -32602 || !bytes.Contains(r.Data, []byte(want)) {
			t.Errorf("step %d: %s, want -32602 %q", 3+i, r, want)
		}
	}
}

// TestFSWriteRefusesAHardLink: an agent links a file outside its cwd into it (ln outside/x.txt cwd/hard) and
// asks the gateway to write through the link. Writing in place would change the outside file; the gateway
// refuses a file with more than one link (-32602) and leaves it as it was, not even truncated. Reading
// through the link is allowed (docs/agents.md says why).
func TestFSWriteRefusesAHardLink(t *testing.T) {
	s, cwd, outside := fsAgentSession(t)
	target := filepath.Join(outside, "x.txt")
	if err := os.WriteFile(target, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(cwd, "hard")
	res := fsTurn(t, s,
		fsStep{Op: "link", From: target, Path: hard},
		fsStep{Op: "write", Path: hard, Content: "pwned"},
		fsStep{Op: "read", Path: hard},
	)
	if r := res[1]; r.Code != -32602 || !bytes.Contains(r.Data, []byte("hard link")) {
		t.Errorf("a write through a hard link answered %s, want -32602 naming the hard link", r)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "original" {
		t.Fatalf("the file outside the cwd is now %q (%v)", b, err)
	}
	if r := res[2]; r.Content == nil || *r.Content != "original" {
		t.Errorf("a read through the hard link: %s", r)
	}
}

// holdingDelegate serves fs/* like an editor that takes its time: each call waits until release is closed
// (or the agent withdraws it). It closes release itself once it holds total calls: an unbounded gateway
// then gets every answer instead of hanging.
type holdingDelegate struct {
	total   int32
	held    atomic.Int32
	release chan struct{}
	once    sync.Once
}

func (d *holdingDelegate) open() { d.once.Do(func() { close(d.release) }) }

func (d *holdingDelegate) ReadTextFile(ctx context.Context, _ json.RawMessage) (any, *acp.RequestError) {
	if d.held.Add(1) == d.total {
		d.open()
	}
	select {
	case <-d.release:
		return map[string]string{"content": "from the editor"}, nil
	case <-ctx.Done():
		return nil, acp.NewRequestCancelled(nil)
	}
}

func (d *holdingDelegate) WriteTextFile(ctx context.Context, params json.RawMessage) (any, *acp.RequestError) {
	return d.ReadTextFile(ctx, params)
}

// signalSink follows a session's log and calls fn once a frame holds text.
type signalSink struct {
	text string
	fn   func()
	done chan struct{}
}

func (k *signalSink) Frame(_ uint64, frame []byte) error {
	if bytes.Contains(frame, []byte(k.text)) {
		k.fn()
	}
	return nil
}

func (k *signalSink) Note(string, any) error { return nil }

func (k *signalSink) Wait(wake <-chan struct{}) error {
	select {
	case <-wake:
		return nil
	case <-k.done:
		return errors.New("test over")
	}
}

// TestFSRequestsInFlightAreBounded: a session has at most Config.MaxFSRequests (default 16) fs/* requests in
// flight; more are refused at once (-32603, saying so) instead of piling up — every one held a goroutine, and
// a blocked local open an OS thread. The agent sends 20 reads to an editor that holds them; 16 reach it and
// 4 are refused. Once the editor answers, the slots are free again.
func TestFSRequestsInFlightAreBounded(t *testing.T) {
	s, cwd, _ := fsAgentSession(t)
	const sent, bound = 20, 16 // bound: Config.MaxFSRequests's default
	d := &holdingDelegate{total: sent, release: make(chan struct{})}
	defer s.DelegateFS(principal.Principal{}, d)()
	sink := &signalSink{text: strconv.Itoa(sent-bound) + " answered", fn: d.open, done: make(chan struct{})}
	followed := make(chan error, 1)
	go func() { followed <- s.Follow(s.StartAt(0, false, ""), sink, eventlog.FollowLimits{}) }()
	defer func() { close(sink.done); <-followed }()

	path := filepath.Join(cwd, "a.txt")
	res := fsTurn(t, s, fsStep{Op: "read", Path: path, Times: sent, SignalAfter: sent - bound})
	want := map[string]int{"ok": bound, "-32603": sent - bound}
	if got := res[0].Answers; !maps.Equal(got, want) || d.held.Load() != bound {
		t.Fatalf("%d reads at once: answers %v, the editor was asked %d times; want %v and %d", sent, got, d.held.Load(), want, bound)
	}
	res = fsTurn(t, s, fsStep{Op: "read", Path: path, Times: bound})
	if got := res[0].Answers; !maps.Equal(got, map[string]int{"ok": bound}) {
		t.Fatalf("after the editor answered, %d reads at once: %v", bound, got)
	}
}

// TestFSReadFitsTheAgentsLine: a read's answer must fit on the one JSON-RPC line an agent's SDK accepts
// (acp-go-sdk: 10 MiB). 2 MiB of '<' is under the 4 MiB read bound but takes 12 MiB encoded (\u003c), and
// that line ended the agent's connection; the gateway refuses it (-32602) and the agent goes on.
func TestFSReadFitsTheAgentsLine(t *testing.T) {
	s, cwd, _ := fsAgentSession(t)
	path := filepath.Join(cwd, "angles.txt")
	if err := os.WriteFile(path, bytes.Repeat([]byte("<"), 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	res := fsTurn(t, s, fsStep{Op: "read", Path: path}, fsStep{Op: "read", Path: path, Line: intp(1), Limit: intp(1)})
	for i, r := range res {
		if r.Code != -32602 || !bytes.Contains(r.Data, []byte("encoded")) {
			t.Errorf("read %d of 2 MiB of '<': %.200s, want -32602 saying it is too large encoded", i+1, r)
		}
	}
}
