package events

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeEvent feeds arbitrary lines to the decoder and, when they decode, to a Context: nothing may
// panic, and everything produced must be valid JSON (schema validation is left to the golden tests, it is
// too slow per fuzz input).
func FuzzDecodeEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"text_delta","text":"hi"}`,
		`{"type":"tool_call","id":"t1","name":"read_file","args":{"path":"../x","line":3}}`,
		`{"type":"tool_result","ok":false,"error":{"kind":"io","message":"m"},"exitCode":2,"output":{"a":[1,2]}}`,
		`{"type":"subagent","id":"s1","name":"r","status":"timed_out","summary":"s"}`,
		`{"type":"recurse","correlationId":"c1","parentRunId":"r0","depth":1,"prompt":"p"}`,
		`{"type":"iteration_output","correlationId":"c1","text":"o","metrics":{"latencyMs":1,"costUsd":0.1,"tokens":5}}`,
		`{"type":"plan","entries":[{"content":"","priority":"x","status":"y"}]}`,
		`{"type":"usage","used":1e3,"size":2,"cost":{"amount":1,"currency":"USD"}}`,
		`{"type":"warning","id":"w","message":"m","provider":"p"}`,
		`{"type":"permission_request","id":"p","tool":"bash","args":{"command":["a"]}}`,
		`{"type":"error","nodeId":"c1","message":"m"}`,
		`{"type":"assistant_message","text":"hi there"}`,
		`{"type":"done","status":"interrupted","answer":"a","turnId":"t"}`,
		`not json`, `{"type":"x"}`, `{}`, `[]`, `{"type":"text_delta","text":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := DecodeEvent(line)
		c := NewContext(Config{SessionID: "s", Cwd: "/w", MaxFieldBytes: 256, MaxChunkBytes: 16})
		c.BeginTurn("t")
		c.ApplyLine([]byte(`{"type":"text_delta","text":"hi"}`))
		c.ApplyLine([]byte(`{"type":"recurse","correlationId":"c1"}`))
		res := c.ApplyLine(line)
		if err != nil {
			if !res.Malformed {
				t.Fatalf("decode error %v but not malformed", err)
			}
			return
		}
		_ = ev
		for _, p := range res.Updates {
			if !json.Valid(p) {
				t.Fatalf("invalid update %q", p)
			}
		}
		if res.Permission != nil {
			if !json.Valid(res.Permission.Params) {
				t.Fatalf("invalid permission %q", res.Permission.Params)
			}
			d := c.PermissionDecision(res.Permission.ID, json.RawMessage(line), nil)
			if !json.Valid(d.Line()) {
				t.Fatalf("invalid decision %q", d.Line())
			}
		}
		out, _ := c.EndTurn("")
		for _, p := range out {
			if !json.Valid(p) {
				t.Fatalf("invalid end update %q", p)
			}
		}
	})
}
