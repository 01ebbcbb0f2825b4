package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sseEvent is one Server-Sent Event (or comment, when Comment is set).
type sseEvent struct {
	ID      string
	Data    []byte
	Comment string
}

type sseStream struct {
	t    *testing.T
	resp *http.Response
	ch   chan sseEvent
	err  chan error
}

// openSSE opens the event stream with the given headers.
func (g *gateway) openSSE(t *testing.T, path string, hdr map[string]string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", g.base+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("SSE %s: %d", path, resp.StatusCode)
	}
	s := &sseStream{t: t, resp: resp, ch: make(chan sseEvent, 1<<14), err: make(chan error, 1)}
	go func() {
		br := bufio.NewReaderSize(resp.Body, 1<<20)
		var ev sseEvent
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				s.err <- err
				close(s.ch)
				return
			}
			line = bytes.TrimSuffix(line, []byte("\n"))
			switch {
			case len(line) == 0:
				if ev.Data != nil || ev.Comment != "" {
					s.ch <- ev
				}
				ev = sseEvent{}
			case line[0] == ':':
				ev.Comment = string(line[1:])
			case bytes.HasPrefix(line, []byte("id: ")):
				ev.ID = string(line[4:])
			case bytes.HasPrefix(line, []byte("data: ")):
				if ev.Data != nil {
					ev.Data = append(ev.Data, '\n')
				}
				ev.Data = append(ev.Data, line[6:]...)
			default:
				s.err <- fmt.Errorf("unexpected SSE line %q", line)
				close(s.ch)
				return
			}
		}
	}()
	return s
}

// next returns the next event (comments included), failing after a generous safety timeout.
func (s *sseStream) next() sseEvent {
	s.t.Helper()
	select {
	case ev, ok := <-s.ch:
		if !ok {
			s.t.Fatalf("SSE stream ended: %v", <-s.err)
		}
		return ev
	case <-time.After(40 * time.Second):
		s.t.Fatal("no SSE event within 40s")
	}
	return sseEvent{}
}

// until collects events up to and including the first for which stop holds.
func (s *sseStream) until(stop func(sseEvent) bool) []sseEvent {
	s.t.Helper()
	var out []sseEvent
	for {
		ev := s.next()
		out = append(out, ev)
		if stop(ev) {
			return out
		}
	}
}

func isNote(method string) func(sseEvent) bool {
	return func(ev sseEvent) bool {
		f, _ := parseWire(ev.Data)
		return ev.ID == "" && f.Method == method
	}
}

// checkSSEFrames asserts the logged events are exactly full[from-1:to], ids equal to seq, data byte-identical.
func checkSSEFrames(t *testing.T, evs []sseEvent, full []logEntry, from uint64) uint64 {
	t.Helper()
	next := from
	for _, ev := range evs {
		if ev.ID == "" {
			continue
		}
		if ev.ID != strconv.FormatUint(next, 10) {
			t.Fatalf("SSE id %s, want %d", ev.ID, next)
		}
		if int(next) <= len(full) && !bytes.Equal(ev.Data, full[next-1].Raw) {
			t.Fatalf("SSE frame %d differs:\n%s\n%s", next, ev.Data, full[next-1].Raw)
		}
		next++
	}
	return next - 1
}

func TestDeliverySSEResumesExactly(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	s := g.createSession(map[string]string{"permissionPolicy": "approve-all"})
	for range 3 {
		if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"sse turn"}`, nil); code != http.StatusOK {
			t.Fatalf("prompt %d", code)
		}
	}
	full := g.fullLogWS(t, s.ID, s.Epoch)
	head := uint64(len(full))
	mid := head / 2

	// Last-Event-ID wins over ?after=.
	st := g.openSSE(t, "/v1/sessions/"+s.ID+"/events?after=1", map[string]string{"Last-Event-ID": strconv.FormatUint(mid, 10)})
	h := st.resp.Header
	if h.Get("Content-Type") != "text/event-stream" || h.Get("Cache-Control") != "no-cache" || h.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("SSE headers %v", h)
	}
	evs := st.until(isNote("_gateway/replay_complete"))
	if got := checkSSEFrames(t, evs, full, mid+1); got != head {
		t.Fatalf("replay after Last-Event-ID %d ended at %d, want %d", mid, got, head)
	}
	// Live frames follow with ids continuing.
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"live turn"}`, &started)
	live := st.until(func(ev sseEvent) bool {
		f, _ := parseWire(ev.Data)
		return f.Method == "_gateway/turn_ended"
	})
	full = g.fullLogWS(t, s.ID, s.Epoch)
	last := checkSSEFrames(t, live, full, head+1)

	// An EventSource reconnect sends the last id it saw: exactly the rest, then replay_complete.
	cut := head + (last-head)/2
	re := g.openSSE(t, "/v1/sessions/"+s.ID+"/events", map[string]string{"Last-Event-ID": strconv.FormatUint(cut, 10)})
	if got := checkSSEFrames(t, re.until(isNote("_gateway/replay_complete")), full, cut+1); got != last {
		t.Fatalf("reconnect replayed to %d, want %d", got, last)
	}

	// A wrong epoch or a cursor past the head is a resync, never a partial replay.
	for _, tc := range []struct{ q, reason string }{
		{"?after=2&epoch=nope", "epoch_changed"},
		{fmt.Sprintf("?after=%d", last+10), "invalid_cursor"},
	} {
		x := g.openSSE(t, "/v1/sessions/"+s.ID+"/events"+tc.q, nil)
		ev := x.next()
		if ev.ID != "" || !strings.Contains(string(ev.Data), `"_gateway/resync_required"`) || !strings.Contains(string(ev.Data), `"reason":"`+tc.reason+`"`) {
			t.Fatalf("%s: first event %+v", tc.q, ev)
		}
	}
}

// TestDeliverySSEHeartbeat waits for the heartbeat comment on an idle stream (--sse-heartbeat, 15 s by
// default). The demo agent's available_commands_update may still arrive after the replay: it follows
// session/new asynchronously; so does the stream's `_gateway/presence`.
func TestDeliverySSEHeartbeat(t *testing.T) {
	t.Parallel()
	g := startGateway(t, "--sse-heartbeat", "100ms")
	s := g.createSession(nil)
	st := g.openSSE(t, "/v1/sessions/"+s.ID+"/events", nil)
	st.until(isNote("_gateway/replay_complete"))
	for {
		ev := st.next()
		if ev.Comment == " heartbeat" && ev.Data == nil {
			return
		}
		if !strings.Contains(string(ev.Data), `"available_commands_update"`) && !strings.Contains(string(ev.Data), `"_gateway/presence"`) {
			t.Fatalf("after replay_complete on an idle session: %+v, want a heartbeat comment", ev)
		}
	}
}

func TestDeliveryJSONPages(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	s := g.createSession(map[string]string{"permissionPolicy": "approve-all"})
	for range 3 {
		g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"page turn"}`, nil)
	}
	full := g.fullLogWS(t, s.ID, s.Epoch)
	for _, limit := range []int{1, 7, 1000} {
		got, pages := g.walkPages(t, s.ID, limit)
		if len(got) != len(full) {
			t.Fatalf("limit %d: %d frames over %d pages, log has %d", limit, len(got), pages, len(full))
		}
		for i := range got {
			if !bytes.Equal(got[i].Raw, full[i].Raw) {
				t.Fatalf("limit %d: page frame %d differs from the socket's:\n%s\n%s", limit, i+1, got[i].Raw, full[i].Raw)
			}
		}
	}
	head := uint64(len(full))

	// An empty page with a short wait returns empty, positioned at the cursor.
	var p eventsPage
	if code, body, err := g.httpDo(context.Background(), "GET", fmt.Sprintf("/v1/sessions/%s/events?after=%d&wait=50ms", s.ID, head), nil, &p); code != http.StatusOK || err != nil {
		t.Fatalf("empty wait: %d %v %s", code, err, body)
	}
	if len(p.Frames) != 0 || p.LastSeq != head || p.HeadSeq != head || p.Epoch != s.Epoch {
		t.Fatalf("empty page %+v", p)
	}

	// Long-poll: the page answers when the next frame arrives.
	type pageRes struct {
		p    eventsPage
		code int
		err  error
	}
	done := make(chan pageRes, 1)
	go func() {
		var p eventsPage
		code, _, err := g.httpDo(context.Background(), "GET", fmt.Sprintf("/v1/sessions/%s/events?after=%d&wait=25s&limit=1000", s.ID, head), nil, &p)
		done <- pageRes{p, code, err}
	}()
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"quick"}`, &started)
	var r pageRes
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("long-poll did not answer")
	}
	if r.err != nil || r.code != http.StatusOK || len(r.p.Frames) == 0 {
		t.Fatalf("long-poll: %d %v %+v", r.code, r.err, r.p)
	}
	first, _ := parseWire(r.p.Frames[0])
	if first.Params.Meta.Gateway.Seq != head+1 || first.Method != "_gateway/turn_started" || r.p.LastSeq != head+uint64(len(r.p.Frames)) {
		t.Fatalf("long-poll page starts at %s, lastSeq %d", r.p.Frames[0], r.p.LastSeq)
	}

	// Resync cases come back as notes, with no frames.
	for _, tc := range []struct{ q, reason string }{
		{"?after=2&epoch=nope", "epoch_changed"},
		{fmt.Sprintf("?after=%d", head+1000), "invalid_cursor"},
	} {
		var p eventsPage
		g.do("GET", "/v1/sessions/"+s.ID+"/events"+tc.q, nil, &p)
		if len(p.Notes) != 1 || !strings.Contains(string(p.Notes[0]), `"reason":"`+tc.reason+`"`) {
			t.Fatalf("%s: notes %s frames %d", tc.q, p.Notes, len(p.Frames))
		}
	}
}

// TestDeliveryLogTruncatedResync: with a small --log-max-frames, a cursor that fell out of the log gets
// resync_required log_truncated (with the bounds), on the socket and in a page.
func TestDeliveryLogTruncatedResync(t *testing.T) {
	t.Parallel()
	g := startGateway(t, "--log-max-frames", "10")
	s := g.createSession(map[string]string{"permissionPolicy": "approve-all"})
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"make many frames"}`, nil)
	var v sessionJSON
	g.do("GET", "/v1/sessions/"+s.ID, nil, &v)
	if v.LastSeq <= 20 {
		t.Fatalf("only %d frames", v.LastSeq)
	}
	w := g.dial(fmt.Sprintf("/v1/sessions/%s/ws?after=1&epoch=%s", s.ID, s.Epoch))
	f, _ := w.waitFor("first frame", func(f frame) bool { return true })
	e1, e2 := fmt.Sprintf(`"earliestSeq":%d`, v.LastSeq-9), fmt.Sprintf(`"headSeq":%d`, v.LastSeq)
	if f.Method != "_gateway/resync_required" || f.Params.Reason != "log_truncated" || !strings.Contains(string(f.Raw), e1) || !strings.Contains(string(f.Raw), e2) {
		t.Fatalf("first frame %s, want log_truncated with %s, %s", f.Raw, e1, e2)
	}
	// The newest 10 frames are still served from after=head-10.
	r := g.dial(fmt.Sprintf("/v1/sessions/%s/ws?after=%d&epoch=%s", s.ID, v.LastSeq-10, s.Epoch))
	_, i := r.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
	if got := checkContiguous(t, r.snapshot()[:i], v.LastSeq-9); got != v.LastSeq {
		t.Fatalf("replayed to %d", got)
	}
}

// TestDeliveryMaxClients503: past --max-clients a socket gets HTTP 503 before the upgrade, and an event
// stream gets a 503 problem.
func TestDeliveryMaxClients503(t *testing.T) {
	t.Parallel()
	g := startGateway(t, "--max-clients", "1")
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	w.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
	req, _ := http.NewRequest("GET", g.base+"/v1/sessions/"+s.ID+"/ws", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	checkTooManyClients(t, "second socket", req)
	req, _ = http.NewRequest("GET", g.base+"/v1/sessions/"+s.ID+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	checkTooManyClients(t, "event stream past the cap", req)
}

// checkTooManyClients sends req and wants 503 too_many_clients with the wait both in Retry-After and in the
// body's retryAfter, as every problem with a wait carries it.
func checkTooManyClients(t *testing.T, what string, req *http.Request) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct {
		Code       string
		RetryAfter int
	}
	body, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(body, &p)
	if resp.StatusCode != http.StatusServiceUnavailable || p.Code != "too_many_clients" ||
		resp.Header.Get("Retry-After") != "5" || p.RetryAfter != 5 {
		t.Fatalf("%s: %d Retry-After %q %s, want 503 too_many_clients with retryAfter 5", what, resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}

// TestDeliveryResyncThenLive: a client whose cursor fell out of a small log gets resync_required with the
// bounds, then live frames starting exactly at headSeq+1 (never a partial replay), and the snapshot it reloads
// (GET /v1/sessions/{id}) reflects at least headSeq.
func TestDeliveryResyncThenLive(t *testing.T) {
	t.Parallel()
	g := startGateway(t, "--log-max-frames", "15")
	s := g.createSession(map[string]string{"permissionPolicy": "approve-all"})
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	w.waitFor("replay_complete", func(f frame) bool { return f.Method == "_gateway/replay_complete" })
	w.c.CloseNow()
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", `{"text":"fill the log"}`, nil)
	r := g.dial(fmt.Sprintf("/v1/sessions/%s/ws?after=0&epoch=%s", s.ID, s.Epoch))
	first, _ := r.waitFor("resync", func(f frame) bool { return f.Method != "" })
	var rp struct {
		Params struct {
			Reason               string
			EarliestSeq, HeadSeq uint64
		}
	}
	_ = json.Unmarshal(first.Raw, &rp)
	if first.Method != "_gateway/resync_required" || rp.Params.Reason != "log_truncated" || rp.Params.EarliestSeq == 0 || rp.Params.HeadSeq < rp.Params.EarliestSeq {
		t.Fatalf("first frame %s", first.Raw)
	}
	var v sessionJSON
	g.do("GET", "/v1/sessions/"+s.ID, nil, &v)
	if v.LastSeq < rp.Params.HeadSeq {
		t.Fatalf("snapshot at %d, resync head %d", v.LastSeq, rp.Params.HeadSeq)
	}
	var started struct{ TurnID string }
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"quick"}`, &started)
	r.waitFor("turn_ended", turnEnded(started.TurnID))
	fs := r.snapshot()
	for _, f := range fs {
		if f.Method == "_gateway/replay_complete" {
			t.Fatalf("replay_complete after a resync: %s", f.Raw)
		}
	}
	if got := checkContiguous(t, fs, rp.Params.HeadSeq+1); got <= rp.Params.HeadSeq {
		t.Fatal("no live frames after the resync")
	}
}

// TestDeliverySSEPendingRequestWithoutID: on an SSE stream resumed past a pending permission request, the
// request is re-sent before replay_complete without an id (so Last-Event-ID never moves backwards), as the
// logged frame marked `_meta.gateway.resent: true`, and a JSON page never repeats it.
func TestDeliverySSEPendingRequestWithoutID(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	s := g.createSession(nil)
	w := g.dial("/v1/sessions/" + s.ID + "/ws")
	// The demo agent's commands follow session/new's answer, under load even past the permission request: wait
	// for them, so nothing is logged after the request.
	w.waitFor("the demo agent's commands", func(f frame) bool { return f.updateKind() == "available_commands_update" })
	g.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"text":"edit please"}`, nil)
	perm, _ := w.waitFor("permission", isPermissionRequest)
	var v sessionJSON
	g.do("GET", "/v1/sessions/"+s.ID, nil, &v)
	st := g.openSSE(t, "/v1/sessions/"+s.ID+"/events", map[string]string{"Last-Event-ID": strconv.FormatUint(v.LastSeq, 10)})
	evs := st.until(isNote("_gateway/replay_complete"))
	var req []sseEvent
	for _, ev := range evs {
		if f, _ := parseWire(ev.Data); f.Method == "session/request_permission" {
			req = append(req, ev)
		}
	}
	if len(req) != 1 || req[0].ID != "" || !bytes.Equal(bytes.Replace(req[0].Data, []byte(`,"resent":true}`), []byte(`}`), 1), perm.Raw) ||
		!bytes.Contains(req[0].Data, []byte(`"resent":true}`)) {
		t.Fatalf("re-sent requests %+v, want one without an id", req)
	}
	var p eventsPage
	g.do("GET", fmt.Sprintf("/v1/sessions/%s/events?after=%d", s.ID, v.LastSeq), nil, &p)
	if len(p.Frames) != 0 || p.LastSeq != v.LastSeq {
		t.Fatalf("page past the request: %+v", p)
	}
}
