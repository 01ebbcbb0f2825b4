package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The faces measured through the gateway, one flood each, driven by measureFlood. Every face except /acp
// is prompted over REST; /acp prompts on its first socket, the way an ACP client does.

// wsFace is a client of `/v1/sessions/{id}/ws`.
type wsFace struct{ c wsConn }

func (f *wsFace) next(ctx context.Context) ([]byte, error) { return f.c.next(ctx) }
func (f *wsFace) control(_ context.Context, b []byte) frameKind {
	return gatewayControl(b)
}
func (f *wsFace) close() { f.c.closeNow() }

// sseFace is a client of `GET /v1/sessions/{id}/events` with `Accept: text/event-stream`.
type sseFace struct {
	body io.ReadCloser
	br   *bufio.Reader
	line []byte // reused for lines longer than the reader's buffer
}

var sseData = []byte("data: ")

// next returns the payload of the next `data:` line (frames are one line of JSON).
func (f *sseFace) next(context.Context) ([]byte, error) {
	for {
		l, err := f.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			f.line = append(f.line[:0], l...)
			for errors.Is(err, bufio.ErrBufferFull) {
				l, err = f.br.ReadSlice('\n')
				f.line = append(f.line, l...)
			}
			l = f.line
		}
		if err != nil {
			return nil, err
		}
		if bytes.HasPrefix(l, sseData) {
			return bytes.TrimRight(l[len(sseData):], "\r\n"), nil
		}
	}
}
func (f *sseFace) control(_ context.Context, b []byte) frameKind { return gatewayControl(b) }
func (f *sseFace) close()                                        { f.body.Close() }

// pageFace long-polls `GET /v1/sessions/{id}/events?after=N&limit=1000&wait=…` and hands out the frames
// of each page one by one.
type pageFace struct {
	g       *gatewayProc
	id      string
	after   uint64
	pending [][]byte     // the rest of the page: views into body
	frames  [][]byte     // reused for pending
	body    bytes.Buffer // reused page buffer
}

// eventsPage is a page's metadata.
type eventsPage struct {
	LastSeq uint64 `json:"lastSeq"`
	Closed  bool   `json:"closed"`
}

func (f *pageFace) next(ctx context.Context) ([]byte, error) {
	for len(f.pending) == 0 {
		url := fmt.Sprintf("%s/v1/sessions/%s/events?after=%d&limit=1000&wait=25s", f.g.base, f.id, f.after)
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := httpc.Do(req)
		if err != nil {
			return nil, err
		}
		f.body.Reset()
		_, err = f.body.ReadFrom(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("events page: %d %s", resp.StatusCode, bytes.TrimSpace(f.body.Bytes()))
		}
		frames, p, err := splitPage(f.body.Bytes(), f.frames[:0])
		if err != nil {
			return nil, fmt.Errorf("events page: %w", err)
		}
		if len(frames) == 0 && p.Closed {
			return nil, io.EOF
		}
		f.frames = frames
		f.pending, f.after = frames, max(f.after, p.LastSeq)
	}
	b := f.pending[0]
	f.pending = f.pending[1:]
	return b, nil
}
func (f *pageFace) control(_ context.Context, b []byte) frameKind { return gatewayControl(b) }
func (f *pageFace) close()                                        {}

// acpFace is a raw-ACP client of `/acp/{agent}` attached to one session.
type acpFace struct{ a *acpWS }

// promptID is the JSON-RPC id of the flood's session/prompt on /acp.
const promptID = 3

func (f *acpFace) next(ctx context.Context) ([]byte, error) { return f.a.c.next(ctx) }
func (f *acpFace) control(ctx context.Context, b []byte) frameKind {
	var m rpcMsg
	if json.Unmarshal(b, &m) != nil {
		return sigNone
	}
	switch {
	case m.Method == "session/request_permission":
		_ = f.a.send(ctx, map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}}})
	case m.Method == "" && string(m.ID) == strconv.Itoa(promptID):
		if bytes.Contains(m.Result, []byte(`"end_turn"`)) {
			return sigEnd
		}
		return sigEndBad
	}
	return sigNone
}
func (f *acpFace) close() { f.a.c.closeNow() }

// face names a gateway face as gwbench rows do.
type face string

const (
	faceWS    face = "ws"
	faceACP   face = "/acp"
	faceSSE   face = "sse"
	facePages face = "pages"
)

// runFace floods one gateway session with k clients of one face attached.
func runFace(ctx context.Context, g *gatewayProc, fc face, k int, prompt string, n, size int) (flood, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if fc == faceACP {
		return runACP(ctx, g, k, prompt, n, size)
	}
	id, err := g.createSession(ctx, "flood")
	if err != nil {
		return flood{}, err
	}
	defer g.do(context.Background(), "DELETE", "/v1/sessions/"+id, nil, nil)
	cls := make([]floodClient, 0, k)
	defer func() { // the clients opened before a failure; measureFlood closes them itself
		if err != nil {
			for _, c := range cls {
				c.face.close()
			}
		}
	}()
	for range k {
		var c floodClient
		if c, err = g.openFace(ctx, fc, id); err != nil {
			return flood{}, err
		}
		cls = append(cls, c)
	}
	restPrompt := func(ctx context.Context) error {
		_, err := g.do(ctx, "POST", "/v1/sessions/"+id+"/prompt", map[string]string{"text": prompt}, nil)
		return err
	}
	return measureFlood(ctx, "gateway "+string(fc), g, cls, n, size, restPrompt)
}

// openFace opens one client of a REST-prompted face on session id.
func (g *gatewayProc) openFace(ctx context.Context, fc face, id string) (floodClient, error) {
	switch fc {
	case faceWS:
		c, err := dialWS(ctx, g.wsURL(id))
		if err != nil {
			return floodClient{}, fmt.Errorf("dial: %w", err)
		}
		return floodClient{face: &wsFace{c: c}}, nil
	case faceSSE:
		req, err := http.NewRequestWithContext(ctx, "GET", g.base+"/v1/sessions/"+id+"/events", nil)
		if err != nil {
			return floodClient{}, err
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := httpc.Do(req)
		if err != nil {
			return floodClient{}, err
		}
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return floodClient{}, fmt.Errorf("events (SSE): %d %s", resp.StatusCode, bytes.TrimSpace(b))
		}
		return floodClient{face: &sseFace{body: resp.Body, br: bufio.NewReaderSize(resp.Body, 64<<10)}}, nil
	case facePages:
		return floodClient{face: &pageFace{g: g, id: id}, ready: true}, nil
	}
	return floodClient{}, fmt.Errorf("unknown face %q", fc)
}

// runACP opens k raw-ACP sockets on `/acp/flood`: the first creates the session (session/new) and sends the
// prompt, the others attach to it with session/resume and count the flood's chunks (they never see the
// prompt's answer).
func runACP(ctx context.Context, g *gatewayProc, k int, prompt string, n, size int) (res flood, err error) {
	cls := make([]floodClient, 0, k)
	defer func() {
		if err != nil {
			for _, c := range cls {
				c.face.close()
			}
		}
	}()
	var sid string
	for i := range k {
		c, err := dialWS(ctx, "ws"+strings.TrimPrefix(g.base, "http")+"/acp/flood")
		if err != nil {
			return flood{}, fmt.Errorf("dial /acp: %w", err)
		}
		a := &acpWS{c: c}
		cls = append(cls, floodClient{face: &acpFace{a: a}, ready: true, untilChunks: i > 0})
		if _, err := a.call(ctx, 1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
			return flood{}, err
		}
		if i == 0 {
			r, err := a.call(ctx, 2, "session/new", map[string]any{"cwd": g.workdir, "mcpServers": []any{},
				"_meta": map[string]any{"gateway": map[string]any{"permissionPolicy": "approve-all"}}})
			if err != nil {
				return flood{}, err
			}
			var s struct {
				SessionID string `json:"sessionId"`
			}
			if err := json.Unmarshal(r, &s); err != nil || s.SessionID == "" {
				return flood{}, fmt.Errorf("session/new: no sessionId in %s", r)
			}
			sid = s.SessionID
			defer g.do(context.Background(), "DELETE", "/v1/sessions/"+sid, nil, nil)
			continue
		}
		if _, err := a.call(ctx, 2, "session/resume", map[string]any{"sessionId": sid, "cwd": g.workdir, "mcpServers": []any{}}); err != nil {
			return flood{}, err
		}
	}
	first := cls[0].face.(*acpFace).a
	acpPrompt := func(ctx context.Context) error {
		return first.send(ctx, map[string]any{"jsonrpc": "2.0", "id": promptID, "method": "session/prompt",
			"params": map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": prompt}}}})
	}
	return measureFlood(ctx, "gateway /acp", g, cls, n, size, acpPrompt)
}

// otherFaces are the faces measured beside the session WebSocket rows, with their client counts.
var otherFaces = []struct {
	face    face
	clients []int
}{
	{faceACP, []int{1, 10}},
	{faceSSE, []int{1, 10}},
	{facePages, []int{1}},
}

// faceRow names a face's flood row; x10 rows are per client, like the WebSocket's.
func faceRow(f face, k int) string {
	name := fmt.Sprintf("gateway %s x%d", f, k)
	if k > 1 {
		name += " (per client)"
	}
	return name
}

// faceRatio is the ratios key of a face's row against direct.
func faceRatio(f face, k int) string {
	key := fmt.Sprintf("gateway_%s_x%d_vs_direct", strings.TrimPrefix(string(f), "/"), k)
	if k > 1 {
		key = fmt.Sprintf("gateway_%s_x%d_per_client_vs_direct", strings.TrimPrefix(string(f), "/"), k)
	}
	return key
}
