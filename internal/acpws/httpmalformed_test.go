package acpws

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/acp-gateway/gateway/internal/acpws/jsonrpc"
)

// An initialize whose id is not a string or a number (true, an object) cannot be answered with its id: it is
// refused on the POST with -32600 at once. It used to open a connection whose answer (id null) went to the
// connection stream nobody could open yet, and the POST waited for ever.
func TestHTTPInitializeWithInvalidIDIsRefused(t *testing.T) {
	e := newEnv(t, Options{})
	for _, id := range []string{`true`, `{}`, `[1]`} {
		body := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":1}}`)
		r := doHTTP(t, "POST", e.srv.URL+"/acp", body, nil)
		var m msg
		if r.status != http.StatusBadRequest || json.Unmarshal(r.body, &m) != nil || m.Error == nil || m.Error.Code != jsonrpc.InvalidRequest || string(m.ID) != "null" {
			t.Errorf("initialize with id %s: %d %s", id, r.status, r.body)
		}
		if r.header.Get("Acp-Connection-Id") != "" {
			t.Errorf("initialize with id %s opened a connection", id)
		}
	}
}

// A message whose members dispatch cannot decode (a jsonrpc that is not a string, a repeated key) is answered
// -32600 with id null on the connection stream; the connection does not keep a route for its id. It used to
// keep one per message (ids of any length) for the connection's life.
func TestHTTPUnreadableMessagesLeaveNoRoutes(t *testing.T) {
	e := newEnv(t, Options{})
	cl, _ := e.httpInit("/acp", map[string]any{})
	conn := cl.open("")
	bodies := []string{
		`{"jsonrpc":2,"id":%d,"method":"session/list","params":{}}`,
		`{"jsonrpc":"2.0","id":%d,"method":5,"method":"session/list","params":{}}`,
		`{"jsonrpc":{},"id":"s%d","method":"session/list"}`,
	}
	for i, b := range bodies {
		r := doHTTP(t, "POST", cl.url, []byte(fmt.Sprintf(b, i+1)), map[string]string{"Acp-Connection-Id": cl.conn})
		if r.status != http.StatusAccepted {
			t.Fatalf("%s: %d %s", b, r.status, r.body)
		}
		m := conn.next()
		if m.Error == nil || m.Error.Code != jsonrpc.InvalidRequest || string(m.ID) != "null" {
			t.Fatalf("%s: answered %s", b, m.raw)
		}
	}
	n, open := e.acp.streamable.PendingRoutes(cl.conn)
	if !open {
		t.Fatal("the connection ended")
	}
	if n != 0 {
		t.Errorf("%d routes kept for messages that were answered", n)
	}
}
