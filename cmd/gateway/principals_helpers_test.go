package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/httpapi"
	"github.com/acp-gateway/gateway/internal/metrics"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/coder/websocket"
	"github.com/go-chi/chi/v5"
)

// testUser is one entry of a users file; its token is "<name>-token".
type testUser struct{ name, role string }

func tokenOf(name string) string { return name + "-token" }

// as is the Authorization header of a users-file user.
func as(name string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + tokenOf(name)}
}

// writeUsersFile writes a users file holding the hashes of the users' tokens.
func writeUsersFile(t *testing.T, path string, users ...testUser) {
	t.Helper()
	type entry struct {
		Name        string `json:"name"`
		Role        string `json:"role"`
		TokenSha256 string `json:"tokenSha256"`
	}
	var f struct {
		Users []entry `json:"users"`
	}
	for _, u := range users {
		f.Users = append(f.Users, entry{u.name, u.role, principal.HashToken(tokenOf(u.name))})
	}
	b, _ := json.Marshal(f)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

var annBobRoot = []testUser{{"ann", "user"}, {"bob", "user"}, {"root", "admin"}}

// startWithUsers runs a gateway with a users file of ann and bob (users) and root (admin).
func startWithUsers(t *testing.T, extra ...string) (*gateway, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "users.json")
	writeUsersFile(t, file, annBobRoot...)
	return startGateway(t, append([]string{"--users", file, "--rate-limit", "0"}, extra...)...), file
}

// routerRoute is one method and pattern the gateway's router serves.
type routerRoute struct{ method, pattern string }

// routerRoutes walks the real router (the one run serves) for its routes, so a table over them cannot miss a
// route added later.
func routerRoutes(t *testing.T) []routerRoute {
	t.Helper()
	s := &httpapi.Server{Metrics: metrics.New(nil)}
	router, ok := s.Handler().(chi.Routes)
	if !ok {
		t.Fatal("handler is not a chi router")
	}
	var out []routerRoute
	_ = chi.Walk(router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if route != "/*" {
			if len(route) > 1 {
				route = strings.TrimSuffix(route, "/")
			}
			out = append(out, routerRoute{method, route})
		}
		return nil
	})
	return out
}

// rpcClient is a raw ACP socket that sends one request at a time and returns its response, skipping
// notifications and requests from the gateway.
type rpcClient struct {
	t    *testing.T
	c    *websocket.Conn
	next int
}

func dialACPAs(t *testing.T, g *gateway, hdr map[string]string) *rpcClient {
	t.Helper()
	return dialACPPathAs(t, g, "/acp", hdr)
}

// dialACPPathAs is dialACPAs at path (/acp/{agent} for an agent of its own).
func dialACPPathAs(t *testing.T, g *gateway, path string, hdr map[string]string) *rpcClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := http.Header{}
	for k, v := range hdr {
		h.Set(k, v)
	}
	c, _, err := websocket.Dial(ctx, g.wsURL(path), &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("dial /acp: %v", err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	rc := &rpcClient{t: t, c: c}
	rc.call("initialize", map[string]any{"protocolVersion": 1})
	return rc
}

// rpcReply is a JSON-RPC response.
type rpcReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (rc *rpcClient) call(method string, params any) rpcReply {
	rc.t.Helper()
	rc.next++
	id := rc.next
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err := rc.c.Write(ctx, websocket.MessageText, req); err != nil {
		rc.t.Fatalf("%s: write: %v", method, err)
	}
	for {
		_, data, err := rc.c.Read(ctx)
		if err != nil {
			rc.t.Fatalf("%s: read: %v", method, err)
		}
		var m struct {
			ID     *int    `json:"id"`
			Method *string `json:"method"`
			rpcReply
		}
		if json.Unmarshal(data, &m) != nil || m.ID == nil || m.Method != nil || *m.ID != id {
			continue
		}
		return m.rpcReply
	}
}

// sessionIDs lists the ids of a session/list result.
func sessionIDs(raw json.RawMessage) []string {
	var r struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
		} `json:"sessions"`
	}
	_ = json.Unmarshal(raw, &r)
	var out []string
	for _, s := range r.Sessions {
		out = append(out, s.SessionID)
	}
	return out
}

// listedIDs lists the ids of a GET /v1/sessions answer.
func listedIDs(t *testing.T, body string) []string {
	t.Helper()
	var r struct {
		Sessions []sessionJSON `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("list: %v: %s", err, body)
	}
	var out []string
	for _, s := range r.Sessions {
		out = append(out, s.ID)
	}
	return out
}

// dialAs opens a session WebSocket with hdr; it reports the close code when the gateway closes it.
func (g *gateway) dialAs(path string, hdr map[string]string) *wsClient {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := http.Header{}
	for k, v := range hdr {
		h.Set(k, v)
	}
	c, _, err := websocket.Dial(ctx, g.wsURL(path), &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		g.t.Fatalf("dial %s: %v", path, err)
	}
	c.SetReadLimit(64 << 20)
	w := &wsClient{t: g.t, c: c, notify: make(chan struct{}, 1), closed: make(chan struct{}), status: -1}
	go w.readLoop()
	g.t.Cleanup(func() { c.CloseNow(); <-w.closed })
	return w
}
