package acpws

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// decodedAsIs is the decision forward took for every frame before forwardsAsIs: a session/update that
// json.Unmarshal reads without error and whose update is not a user_message_chunk.
func decodedAsIs(frame []byte) bool {
	var f logFrame
	if json.Unmarshal(frame, &f) != nil {
		return false
	}
	return f.Method == "session/update" && f.Params.Update.SessionUpdate != "user_message_chunk"
}

// asIsSeeds are frames as the log holds them, and spellings of them that encoding/json reads loosely.
func asIsSeeds(tb testing.TB) [][]byte {
	seeds := [][]byte{
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"_meta":{"flood":{"i":1}},"content":{"text":"` + strings.Repeat("x", 256) + `","type":"text"},"sessionUpdate":"agent_message_chunk","messageId":"t-m1"},"_meta":{"gateway":{"seq":2,"epoch":"e","turnId":"t"}}}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"user_message_chunk"},"_meta":{"gateway":{"seq":2,"turnId":"t"}}}}`),
		[]byte(`{"jsonrpc":"2.0","METHOD":"session/update","Params":{"UPDATE":{"SessionUpdate":"tool_call"}}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session\/update","params":{"update":{"sessionUpdate":"plan"}}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"plan"}},"method":"x"}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","method":null,"params":null}`),
		[]byte(`{"method":"session/update","params":{"update":{"sessionUpdate":"a"},"update":{"sessionUpdate":"user_message_chunk"}}}`),
		[]byte(`{"method":"session/update","params":{"update":{"sessionUpdate":"user_message_chunk"},"update":{"content":{}}}}`),
		[]byte(`{"method":"session/update","params":{"update":[],"permissionId":"p"}}`),
		[]byte(`{"method":"session/update","params":{"permissionId":{"x":1}}}`),
		[]byte(`{"method":"session/update","params":{"_meta":{"gateway":{"turnId":["t"]}}}}`),
		[]byte(`{"method":"session/update","params":{"_meta":{"gateway":"x"}}}`),
		[]byte(`{"method":"session/update","params":{"_meta":[]}}`),
		[]byte(`{"method":"session/update","params":{"\u0075pdate":{"sessionUpdate":"user_message_chunk"}}}`),
		[]byte(`{"method":"session/update","params":{"update":{"\u017fessionUpdate":"user_message_chunk"}}}`),
		[]byte(`{"method":"session/update","params":{"update":{"sessionUpdate":"user_message_chunk\u0000"}}}`),
		[]byte(`{"id":"p1","method":"session/request_permission","params":{"options":[],"_meta":{"gateway":{"permissionId":"p1"}}}}`),
		[]byte(`{"method":"_gateway/permission_resolved","params":{"permissionId":"p1"}}`),
		[]byte(` {"method" : "session/update" , "params" : { "update" : { "sessionUpdate" : "x\\\"" } } } `),
		[]byte(`{"method":"session/update","params":{}} {}`),
		[]byte(`{"method":"session/update","params":{"update":{"content":{"text":"\\\\\"}{[","a":[1,2,{"b":null}]},"sessionUpdate":"agent_thought_chunk"}}}`),
		[]byte(`{"method":"session/update","params":{"update":{"sessionUpdate":true}}}`),
		[]byte(`null`),
		[]byte(`[]`),
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "acp_flood.golden"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range bytes.Split(golden, []byte("\n")) {
		if len(l) > 0 && l[0] == '{' {
			seeds = append(seeds, l)
		}
	}
	return seeds
}

// TestForwardsAsIs holds forwardsAsIs to the decision of the encoding/json decode it replaces on every seed,
// and checks that it does take the frames a turn is made of.
func TestForwardsAsIs(t *testing.T) {
	fast := 0
	for _, f := range asIsSeeds(t) {
		got := forwardsAsIs(f)
		if got && !decodedAsIs(f) {
			t.Errorf("forwardsAsIs(%s) = true; encoding/json does not read it as an update every socket gets", f)
		}
		if got {
			fast++
		}
	}
	for _, f := range [][]byte{
		asIsSeeds(t)[0],
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"a \"b\" \\ é"}}]},"_meta":{"gateway":{"seq":9,"epoch":"e","turnId":"t"}}}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","_meta":{"traceparent":"00-x","gateway":{"seq":1}},"update":{"sessionUpdate":"plan","entries":[]}}}`),
	} {
		if !forwardsAsIs(f) {
			t.Errorf("forwardsAsIs(%s) = false: the frame would be decoded", f)
		}
	}
	if fast < 20 {
		t.Errorf("only %d seeds took the fast path", fast)
	}
}

// FuzzForwardsAsIs: on any valid JSON, forwardsAsIs never says true where encoding/json's reading says the
// frame is not an update every socket forwards (false only costs the decode).
func FuzzForwardsAsIs(f *testing.F) {
	for _, s := range asIsSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		got := forwardsAsIs(frame)
		if !json.Valid(frame) {
			return // the log holds only valid JSON
		}
		if got && !decodedAsIs(frame) {
			t.Fatalf("forwardsAsIs(%q) = true; encoding/json reads it otherwise", frame)
		}
	})
}

// BenchmarkForwardDecision is the per-frame, per-socket cost of deciding whether to forward a flood chunk.
func BenchmarkForwardDecision(b *testing.B) {
	frame := asIsSeeds(b)[0]
	b.Run("forwardsAsIs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !forwardsAsIs(frame) {
				b.Fatal("not as is")
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !decodedAsIs(frame) {
				b.Fatal("not as is")
			}
		}
	})
}
