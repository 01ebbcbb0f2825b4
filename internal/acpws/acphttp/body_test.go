package acphttp

import (
	"testing"

	"github.com/acp-gateway/gateway/internal/acpws/jsonrpc"
)

// TestParsePostWhitespaceIsJSONs: only JSON's own whitespace may surround a message; a form feed, a vertical
// tab or a no-break space around a value makes the body invalid JSON, refused as a parse error.
func TestParsePostWhitespaceIsJSONs(t *testing.T) {
	for _, body := range []string{"0\f", "\v{}", "{}\u00a0", "\f{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}"} {
		_, perr := parsePost([]byte(body))
		if perr == nil || perr.code != jsonrpc.ParseError {
			t.Errorf("parsePost(%q) = %+v, want a parse error (%d)", body, perr, jsonrpc.ParseError)
		}
	}
	if _, perr := parsePost([]byte(" \t\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n")); perr != nil {
		t.Errorf("JSON whitespace around a message: %+v", perr)
	}
}
