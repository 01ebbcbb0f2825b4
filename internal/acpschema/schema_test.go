package acpschema

import (
	"strings"
	"testing"
)

// The method → type table in the protocol brief (§5) must be what the schema's annotations say.
func TestTypeForMatchesBrief(t *testing.T) {
	tests := []struct{ method, params, result string }{
		{"initialize", "InitializeRequest", "InitializeResponse"},
		{"authenticate", "AuthenticateRequest", "AuthenticateResponse"},
		{"session/new", "NewSessionRequest", "NewSessionResponse"},
		{"session/load", "LoadSessionRequest", "LoadSessionResponse"},
		{"session/list", "ListSessionsRequest", "ListSessionsResponse"},
		{"session/resume", "ResumeSessionRequest", "ResumeSessionResponse"},
		{"session/close", "CloseSessionRequest", "CloseSessionResponse"},
		{"session/prompt", "PromptRequest", "PromptResponse"},
		{"session/set_mode", "SetSessionModeRequest", "SetSessionModeResponse"},
		{"session/set_config_option", "SetSessionConfigOptionRequest", "SetSessionConfigOptionResponse"},
		{"session/cancel", "CancelNotification", ""},
		{"session/update", "SessionNotification", ""},
		{"session/request_permission", "RequestPermissionRequest", "RequestPermissionResponse"},
		{"fs/read_text_file", "ReadTextFileRequest", "ReadTextFileResponse"},
		{"fs/write_text_file", "WriteTextFileRequest", "WriteTextFileResponse"},
		{"terminal/create", "CreateTerminalRequest", "CreateTerminalResponse"},
		{"terminal/output", "TerminalOutputRequest", "TerminalOutputResponse"},
		{"terminal/wait_for_exit", "WaitForTerminalExitRequest", "WaitForTerminalExitResponse"},
		{"terminal/kill", "KillTerminalRequest", "KillTerminalResponse"},
		{"terminal/release", "ReleaseTerminalRequest", "ReleaseTerminalResponse"},
	}
	for _, k := range []Kind{Stable, Unstable} {
		for _, tt := range tests {
			p, ok := TypeFor(k, tt.method, false)
			if !ok || p != tt.params {
				t.Errorf("%s %s params: got %q %v, want %q", k, tt.method, p, ok, tt.params)
			}
			r, ok := TypeFor(k, tt.method, true)
			if r != tt.result || ok != (tt.result != "") {
				t.Errorf("%s %s result: got %q %v, want %q", k, tt.method, r, ok, tt.result)
			}
		}
	}
	if _, ok := TypeFor(Stable, "session/set_model", false); ok {
		t.Error("session/set_model must be unstable only")
	}
	if p, ok := TypeFor(Unstable, "session/set_model", false); !ok || p != "SetSessionModelRequest" {
		t.Errorf("unstable session/set_model: %q %v", p, ok)
	}
}

func TestValidateParams(t *testing.T) {
	tests := []struct {
		name   string
		kind   Kind
		method string
		params string
		ok     bool
	}{
		{"new session", Stable, "session/new", `{"cwd":"/tmp","mcpServers":[]}`, true},
		{"mcpServers null", Stable, "session/new", `{"cwd":"/tmp","mcpServers":null}`, false},
		{"prompt", Stable, "session/prompt", `{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}`, true},
		{"prompt null", Stable, "session/prompt", `{"sessionId":"s","prompt":null}`, false},
		{"cancel", Stable, "session/cancel", `{"sessionId":"s"}`, true},
		{"chunk", Stable, "session/update", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}`, true},
		{"usage stable", Stable, "session/update", `{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1,"size":2}}`, false},
		{"usage unstable", Unstable, "session/update", `{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1,"size":2}}`, true},
		{"unknown variant", Unstable, "session/update", `{"sessionId":"s","update":{"sessionUpdate":"brand_new","x":1}}`, false},
		{"tool call update", Unstable, "session/update", `{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"failed","_meta":{"gateway":{"reason":"cancelled"}}}}`, true},
		{"bad status", Unstable, "session/update", `{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"exploded"}}`, false},
		{"permission", Stable, "session/request_permission", `{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[{"optionId":"a","name":"A","kind":"allow_once"}]}`, true},
		{"unknown method", Stable, "nope/nope", `{}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateParams(tt.kind, tt.method, []byte(tt.params))
			if (err == nil) != tt.ok {
				t.Fatalf("ok=%v, err=%v", tt.ok, err)
			}
		})
	}
}

func TestValidateResult(t *testing.T) {
	for _, tt := range []struct {
		method, result string
		ok             bool
	}{
		{"session/request_permission", `{"outcome":{"outcome":"cancelled"}}`, true},
		{"session/request_permission", `{"outcome":{"outcome":"selected","optionId":"a"}}`, true},
		{"session/request_permission", `{}`, false},
		{"session/prompt", `{"stopReason":"end_turn"}`, true},
		{"session/prompt", `{"stopReason":"exploded"}`, false},
		{"session/cancel", `{}`, false}, // a notification has no result
	} {
		err := ValidateResult(Stable, tt.method, []byte(tt.result))
		if (err == nil) != tt.ok {
			t.Errorf("%s %s: ok=%v err=%v", tt.method, tt.result, tt.ok, err)
		}
	}
}

func TestValidateFrame(t *testing.T) {
	for _, tt := range []struct {
		frame string
		ok    bool
	}{
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]},"_meta":{"gateway":{"seq":1}}}}`, true},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{}}}`, false},
		{`{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[]}}`, true},
		{`{"jsonrpc":"2.0","method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[]}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"session/cancel","params":{"sessionId":"s"}}`, false},
		{`{"jsonrpc":"2.0","method":"_gateway/turn_ended","params":{"turnId":"t","stopReason":"whatever"}}`, true},
		{`{"jsonrpc":"2.0","method":"_gateway/turn_ended","params":"x"}`, false},
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, true},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"x"}}`, true},
		{`{"jsonrpc":"2.0","id":3,"error":{"message":"x"}}`, false},
		{`{"jsonrpc":"2.0","id":3}`, false},
		{`{"jsonrpc":"1.0","method":"session/cancel","params":{"sessionId":"s"}}`, false},
		{`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}} {}`, false},
		{`[]`, false},
	} {
		err := ValidateFrame(Stable, []byte(tt.frame))
		if (err == nil) != tt.ok {
			t.Errorf("%s: ok=%v err=%v", tt.frame, tt.ok, err)
		}
	}
}

func TestErrorsNameTheType(t *testing.T) {
	err := ValidateParams(Stable, "session/new", []byte(`{"cwd":"/tmp","mcpServers":null}`))
	if err == nil || !strings.Contains(err.Error(), "NewSessionRequest") || !strings.Contains(err.Error(), "mcpServers") {
		t.Fatalf("err = %v", err)
	}
}

// Every $defs type of both files must compile: a broken embed should fail here, not in a caller's test.
func TestAllDefsCompile(t *testing.T) {
	for _, k := range []Kind{Stable, Unstable} {
		d, err := getDoc(k)
		if err != nil {
			t.Fatal(err)
		}
		for method, e := range d.methods {
			for _, def := range e {
				if def == "" {
					continue
				}
				if _, err := d.schema(def); err != nil {
					t.Errorf("%s %s: %v", k, method, err)
				}
			}
		}
	}
}
