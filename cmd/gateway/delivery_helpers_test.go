package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Helpers shared by the delivery tests (delivery_*_test.go). They never call t.Fatal off the test goroutine:
// functions meant for goroutines return errors.

var (
	testAgentOnce sync.Once
	testAgentPath string
	testAgentErr  error
)

// testAgentBinary builds internal/testagent once, next to the SDK example agent (TestMain removes that
// directory at the end).
func testAgentBinary(t *testing.T) string {
	t.Helper()
	testAgentOnce.Do(func() {
		testAgentPath = filepath.Join(filepath.Dir(exampleAgent), "testagent")
		out, err := exec.Command("go", "build", "-o", testAgentPath, "github.com/acp-gateway/gateway/internal/testagent").CombinedOutput()
		if err != nil {
			testAgentErr = fmt.Errorf("building internal/testagent: %v\n%s", err, out)
		}
	})
	if testAgentErr != nil {
		t.Fatal(testAgentErr)
	}
	return testAgentPath
}

// testAgentGateway starts a gateway whose default agent "ta" is the test agent in the given mode, run through a
// per-test symlink so the test can find its process. It returns the gateway and the symlink path.
func testAgentGateway(t *testing.T, mode string, flags ...string) (*gateway, string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "testagent-"+mode)
	if err := os.Symlink(testAgentBinary(t), bin); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--agent", "ta=" + bin + " -mode " + mode, "--default-agent", "ta"}, flags...)
	return startGateway(t, args...), bin
}

// httpDo is g.do for goroutines: it returns the status, the body and an error instead of failing the test.
func (g *gateway) httpDo(ctx context.Context, method, path string, body any, out any) (int, []byte, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, data, err
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, data, fmt.Errorf("decode %q: %w", data, err)
		}
	}
	return resp.StatusCode, data, nil
}

// wireFrame is the part of a frame the delivery tests look at.
type wireFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta struct {
			Gateway struct {
				Seq    uint64 `json:"seq"`
				Epoch  string `json:"epoch"`
				TurnID string `json:"turnId"`
			} `json:"gateway"`
		} `json:"_meta"`
	} `json:"params"`
}

func parseWire(data []byte) (wireFrame, error) {
	var f wireFrame
	err := json.Unmarshal(data, &f)
	return f, err
}

// logEntry is one logged frame: its seq and its exact bytes as a socket delivered them.
type logEntry struct {
	Seq uint64
	Raw []byte
}

// fullLogWS reads a session's whole log on a fresh socket from after=0, up to replay_complete.
func (g *gateway) fullLogWS(t *testing.T, id, epoch string) []logEntry {
	return g.logWS(t, id, epoch, 0)
}

// logWS reads a session's log after seq after on a fresh socket, up to replay_complete, and checks the seqs
// run on from after+1. Frames are not schema-checked here (a wsClient does that): this is the fast reader.
func (g *gateway) logWS(t *testing.T, id, epoch string, after uint64) []logEntry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, g.wsURL(fmt.Sprintf("/v1/sessions/%s/ws?after=%d&epoch=%s", id, after, epoch)), nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 20)
	var out []logEntry
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("reading the full log: %v (after %d frames)", err, len(out))
		}
		f, err := parseWire(data)
		if err != nil {
			t.Fatalf("non-JSON frame %q", data)
		}
		if f.Method == "_gateway/replay_complete" {
			return out
		}
		if f.Method == "_gateway/resync_required" {
			t.Fatalf("full log: %s", data)
		}
		if seq := f.Params.Meta.Gateway.Seq; seq > 0 {
			if seq != after+uint64(len(out))+1 {
				t.Fatalf("log after %d: seq %d after %d frames", after, seq, len(out))
			}
			out = append(out, logEntry{seq, data})
		}
	}
}

func (g *gateway) wsURL(path string) string { return strings.Replace(g.base, "http", "ws", 1) + path }

// eventsPage is the JSON page of GET /v1/sessions/{id}/events.
type eventsPage struct {
	Epoch   string            `json:"epoch"`
	Frames  []json.RawMessage `json:"frames"`
	LastSeq uint64            `json:"lastSeq"`
	HeadSeq uint64            `json:"headSeq"`
	Notes   []json.RawMessage `json:"notes"`
	Closed  bool              `json:"closed"`
}

// walkPages reads the whole log through JSON pages of the given size.
func (g *gateway) walkPages(t *testing.T, id string, limit int) ([]logEntry, int) {
	t.Helper()
	var out []logEntry
	var after uint64
	pages := 0
	for {
		var p eventsPage
		code, body, err := g.httpDo(context.Background(), "GET", fmt.Sprintf("/v1/sessions/%s/events?after=%d&limit=%d", id, after, limit), nil, &p)
		if err != nil || code != http.StatusOK {
			t.Fatalf("page after %d: %d %v %s", after, code, err, body)
		}
		pages++
		if len(p.Notes) > 0 {
			t.Fatalf("page after %d has notes %s", after, p.Notes)
		}
		if len(p.Frames) > limit {
			t.Fatalf("page of %d frames, limit %d", len(p.Frames), limit)
		}
		for _, fr := range p.Frames {
			f, err := parseWire(fr)
			if err != nil || f.Params.Meta.Gateway.Seq != after+1 {
				t.Fatalf("page frame %s: want seq %d", fr, after+1)
			}
			after++
			out = append(out, logEntry{after, fr})
		}
		if p.LastSeq != after {
			t.Fatalf("page lastSeq %d, frames end at %d", p.LastSeq, after)
		}
		if len(p.Frames) == 0 || after >= p.HeadSeq {
			return out, pages
		}
	}
}

// waitGroupGone waits (bounded) until no process is left in the process group pgid.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := syscall.Kill(-pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still alive (kill 0: %v)", pgid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sessionState is GET /v1/sessions/{id} with the fields the fault tests need.
type sessionState struct {
	Status       string `json:"status"`
	StatusReason string `json:"statusReason"`
	CurrentTurn  *struct {
		TurnID string `json:"turnId"`
	} `json:"currentTurn"`
	PendingPermissions []struct {
		ID string `json:"id"`
	} `json:"pendingPermissions"`
}

// waitStatus polls the session until its status is want (bounded).
func (g *gateway) waitStatus(t *testing.T, id, want string) sessionState {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var s sessionState
		code, body, err := g.httpDo(context.Background(), "GET", "/v1/sessions/"+id, nil, &s)
		if err == nil && code == http.StatusOK && s.Status == want {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: status %q (code %d, %v, %s), want %q", id, s.Status, code, err, body, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
