package frameout

import "encoding/json"

var nullID = json.RawMessage("null")

// RPCError encodes a JSON-RPC error response; a nil id is null. data is left out when nil.
func RPCError(id json.RawMessage, code int, msg string, data any) []byte {
	if id == nil {
		id = nullID
	}
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	return b
}

// RPCResult encodes a JSON-RPC result response; a result that cannot be encoded is an internal error.
func RPCResult(id json.RawMessage, result any) []byte {
	if id == nil {
		id = nullID
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	if err != nil {
		return RPCError(id, -32603, "Internal error", nil)
	}
	return b
}

// Request encodes a JSON-RPC request the gateway sends to a client.
func Request(id any, method string, params any) ([]byte, error) {
	return json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

// Notification encodes a JSON-RPC notification.
func Notification(method string, params any) ([]byte, error) {
	return json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}
