package acphttp

import (
	"encoding/json"
	"testing"

	"github.com/acp-gateway/gateway/internal/acpws/jsonrpc"
	"github.com/acp-gateway/gateway/internal/frameout"
	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

// FuzzParsePost feeds arbitrary bytes to the Streamable HTTP body parser: it never panics; a refusal is
// -32700 (not JSON) or -32600 (JSON that is not one message object) and encodes as a JSON-RPC error; an
// accepted body is a JSON object, only a JSON-RPC 2.0 initialize request with an id opens a connection, and
// a request is routed only when dispatch answers it with the same id.
// Seeds: testdata/fuzz/FuzzParsePost.
func FuzzParsePost(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"p-1","result":{"outcome":{"outcome":"cancelled"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, perr := parsePost(body)
		if perr != nil {
			if perr.code != jsonrpc.ParseError && perr.code != jsonrpc.InvalidRequest {
				t.Fatalf("refused with code %d", perr.code)
			}
			if perr.code == jsonrpc.InvalidRequest && !json.Valid(body) {
				t.Fatalf("invalid JSON refused as -32600")
			}
			var e struct {
				ID    json.RawMessage    `json:"id"`
				Error struct{ Code int } `json:"error"`
			}
			if err := json.Unmarshal(frameout.RPCError(jsonrpc.NullID, perr.code, perr.msg, nil), &e); err != nil || string(e.ID) != "null" || e.Error.Code != perr.code {
				t.Fatalf("refusal does not encode: %v", err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil {
			t.Fatalf("accepted a body that is not a JSON object: %v", err)
		}
		if m.initialize && (m.method != "initialize" || !m.isRequest()) {
			t.Fatalf("initialize without being an initialize request: %+v", m)
		}
		// A request the face routes is one dispatch answers with the same id: else its route is never taken
		// (and an initialize POST waits for an answer that goes elsewhere).
		if m.isRequest() {
			var msg jsonrpc.Message
			if err := json.Unmarshal(body, &msg); err != nil || msg.Method == nil || msg.ID == nil || !jsonrpc.ValidID(msg.ID) {
				t.Fatalf("routes a request dispatch does not answer with its id: %+v (%v)", m, err)
			}
			if k := idKey(m.id); k == "" || k != idKey(rawjson.EchoID(msg.ID)) {
				t.Fatalf("routes id %q, dispatch answers %q", k, idKey(rawjson.EchoID(msg.ID)))
			}
		}
	})
}
