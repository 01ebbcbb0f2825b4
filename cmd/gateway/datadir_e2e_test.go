package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// --data-dir (docs/cluster.md §4): a clean restart keeps sessions. The restarted gateway lists them detached,
// a WebSocket resuming with the pre-restart cursor replays the very bytes a live client saw, without a
// resync, and a prompt re-attaches the demo agent (it takes session/load as a no-op).
func TestDataDirCleanRestart(t *testing.T) {
	// One workdir for every start: a restart re-attaches only a cwd inside its own workspace roots.
	dir, workdir := t.TempDir(), t.TempDir()
	g1 := startGateway(t, "--data-dir", dir, "--workdir", workdir)
	s := g1.createSession(map[string]any{})
	live := g1.dial("/v1/sessions/" + s.ID + "/ws")
	var res struct {
		TurnID string `json:"turnId"`
		Status string `json:"status"`
	}
	if code := g1.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"prompt":[{"type":"text","text":"quick"}]}`, &res); code != http.StatusOK || res.Status != "ended" {
		t.Fatalf("prompt: %d %+v", code, res)
	}
	live.waitFor("turn end", turnEnded(res.TurnID))
	loadedLive := acpLoadReplay(t, g1, s.ID, s.Cwd)
	if err := g1.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	live.waitClosed()
	seen := live.snapshot()
	// The last frame a live client saw is the detach on shutdown.
	if last := seen[len(seen)-1]; last.Method != "_gateway/session_status" || !strings.Contains(string(last.Raw), `"status":"detached"`) {
		t.Fatalf("last live frame: %s", last.Raw)
	}

	g2 := startGateway(t, "--data-dir", dir, "--workdir", workdir)
	var list struct {
		Sessions []struct {
			ID         string `json:"id"`
			Status     string `json:"status"`
			LastSeq    uint64 `json:"lastSeq"`
			DurableSeq uint64 `json:"durableSeq"`
			Epoch      string `json:"epoch"`
		} `json:"sessions"`
	}
	if code := g2.do("GET", "/v1/sessions", nil, &list); code != http.StatusOK || len(list.Sessions) != 1 {
		t.Fatalf("list after restart: %d %+v", code, list)
	}
	got := list.Sessions[0]
	head := seen[len(seen)-1].Params.Meta.Gateway.Seq
	if got.ID != s.ID || got.Status != "detached" || got.LastSeq != head || got.DurableSeq != head || got.Epoch != s.Epoch {
		t.Fatalf("listed %+v, want detached at %d in epoch %s", got, head, s.Epoch)
	}

	// Resume from the middle of what the live client saw: the rest, byte for byte, no resync.
	mid := seen[len(seen)/2].Params.Meta.Gateway.Seq
	resumed := g2.dial("/v1/sessions/" + s.ID + "/ws?after=" + itoa(int(mid)) + "&epoch=" + s.Epoch)
	resumed.waitFor("the last stored frame", func(f frame) bool { return f.Params.Meta.Gateway.Seq == head })
	var want []string
	for _, f := range seen {
		if f.Params.Meta.Gateway.Seq > mid {
			want = append(want, string(f.Raw))
		}
	}
	replayed := resumed.snapshot()
	if len(replayed) < len(want) {
		t.Fatalf("replayed %d frames, want %d", len(replayed), len(want))
	}
	for i, w := range want {
		if string(replayed[i].Raw) != w {
			t.Fatalf("replayed frame %d:\n got %s\nwant %s", i, replayed[i].Raw, w)
		}
	}

	// A JSON page from the same cursor holds the same bytes.
	var page struct {
		Frames  []json.RawMessage `json:"frames"`
		Epoch   string            `json:"epoch"`
		LastSeq uint64            `json:"lastSeq"`
	}
	if code := g2.do("GET", "/v1/sessions/"+s.ID+"/events?after="+itoa(int(mid))+"&epoch="+s.Epoch, nil, &page); code != http.StatusOK ||
		page.Epoch != s.Epoch || page.LastSeq != head || len(page.Frames) != len(want) {
		t.Fatalf("page after restart: %d epoch %s lastSeq %d, %d frames (want %d)", code, page.Epoch, page.LastSeq, len(page.Frames), len(want))
	}
	for i, w := range want {
		if string(page.Frames[i]) != w {
			t.Fatalf("page frame %d:\n got %s\nwant %s", i, page.Frames[i], w)
		}
	}

	// /acp session/load replays what it replayed before the restart, byte for byte.
	if loaded := acpLoadReplay(t, g2, s.ID, s.Cwd); strings.Join(loaded, "\n") != strings.Join(loadedLive, "\n") {
		t.Fatalf("/acp load replay after restart:\n%s\nbefore:\n%s", strings.Join(loaded, "\n"), strings.Join(loadedLive, "\n"))
	}

	// SSE with Last-Event-ID gets the same bytes as data.
	req, _ := http.NewRequest("GET", g2.base+"/v1/sessions/"+s.ID+"/events?epoch="+s.Epoch, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", itoa(int(mid)))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	sse := readSSEUntil(t, resp.Body, "id: "+itoa(int(head))+"\n")
	cancel()
	resp.Body.Close()
	for _, w := range want {
		if !strings.Contains(sse, "data: "+w+"\n") {
			t.Fatalf("SSE replay lacks %s\n%s", w, sse)
		}
	}

	// A prompt re-attaches the session (the demo agent loads as a no-op); seq goes on after the head.
	if code := g2.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"prompt":[{"type":"text","text":"quick"}]}`, &res); code != http.StatusOK || res.Status != "ended" {
		t.Fatalf("prompt after restart: %d %+v", code, res)
	}
	f, _ := resumed.waitFor("the re-attached turn's end", turnEnded(res.TurnID))
	if f.Params.Meta.Gateway.Seq <= head || f.Params.Meta.Gateway.Epoch != s.Epoch {
		t.Fatalf("turn end at seq %d epoch %s after head %d", f.Params.Meta.Gateway.Seq, f.Params.Meta.Gateway.Epoch, head)
	}

	// The store's metrics: frames stored by this process (the re-attached turn's), no lag once durable, up.
	waitMetric(t, g2, "gateway_store_lag_frames 0")
	metricsText := getText(t, g2.base+"/metrics")
	for _, want := range []string{"gateway_store_up 1", "gateway_store_publish_errors_total 0", "gateway_store_gaps_total 0"} {
		if !strings.Contains(metricsText, want+"\n") {
			t.Fatalf("metrics lack %q:\n%s", want, metricsText)
		}
	}
	if strings.Contains(metricsText, "gateway_store_frames_total 0\n") {
		t.Fatalf("no stored frames counted:\n%s", metricsText)
	}

	// A second gateway on the same data dir refuses to start.
	if err := run(context.Background(), []string{"--addr", "127.0.0.1:0", "--data-dir", dir}, func(string) string { return "" }, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "in use by another gateway") {
		t.Fatalf("second gateway on the data dir: %v", err)
	}

	// DELETE removes it from the store: the next start lists nothing.
	if code := g2.do("DELETE", "/v1/sessions/"+s.ID, nil, nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}
	if err := g2.stop(); err != nil {
		t.Fatal(err)
	}
	g3 := startGateway(t, "--data-dir", dir, "--workdir", workdir)
	if code := g3.do("GET", "/v1/sessions", nil, &list); code != http.StatusOK || len(list.Sessions) != 0 {
		t.Fatalf("list after delete and restart: %d %+v", code, list)
	}
}

// readSSEUntil reads an event stream until it holds marker.
func readSSEUntil(t *testing.T, r io.Reader, marker string) string {
	t.Helper()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(sb.String(), marker) {
		n, err := r.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			t.Fatalf("event stream ended before %q: %v\n%s", marker, err, sb.String())
		}
	}
	return sb.String()
}

func getText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// waitMetric waits (bounded) until the metrics hold line.
func waitMetric(t *testing.T, g *gateway, line string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(getText(t, g.base+"/metrics"), line+"\n") {
		if time.Now().After(deadline) {
			t.Fatalf("metrics never held %q", line)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// acpLoadReplay loads the session over /acp and returns the notifications it replayed before its answer.
func acpLoadReplay(t *testing.T, g *gateway, id, cwd string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, g.wsURL("/acp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 20)
	load, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/load",
		"params": map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}})
	for _, req := range []string{acpInitialize, string(load)} {
		if err := c.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("/acp load: %v", err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Error  json.RawMessage `json:"error"`
		}
		_ = json.Unmarshal(data, &m)
		switch {
		case m.ID != nil && *m.ID == 2:
			if m.Error != nil {
				t.Fatalf("/acp load: %s", data)
			}
			if len(out) == 0 {
				t.Fatal("/acp load replayed nothing")
			}
			return out
		case m.ID == nil && m.Method == "session/update":
			out = append(out, string(data))
		}
	}
}
