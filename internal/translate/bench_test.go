package translate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acp-gateway/gateway/internal/translate/rawjson"
)

func BenchmarkTranslateChunk(b *testing.B) {
	for _, bc := range []struct{ name, params string }{
		{"withMessageId", `{"sessionId":"0c4e6a1e-0f7a-4b8e-9d55-1f2a3b4c5d6e","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me read the file to understand the structure of the project."},"messageId":"7b1c9e2a-3d4f-4a5b-8c6d-9e0f1a2b3c4d"}}`},
		{"withoutMessageId", `{"sessionId":"0c4e6a1e-0f7a-4b8e-9d55-1f2a3b4c5d6e","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me read the file to understand the structure of the project."}}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := NewContext(Config{SessionID: "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", MaxFieldBytes: 64 << 10, Redact: true})
			c.BeginTurn("3a2b1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9")
			p := []byte(bc.params)
			b.ReportAllocs()
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				if _, err := c.Update(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkTranslateToolCallUpdate(b *testing.B) {
	c := NewContext(Config{SessionID: "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", MaxFieldBytes: 64 << 10, Redact: true})
	c.BeginTurn("t")
	mustUpdate(b, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"toolu_01","title":"Read /p/main.go","kind":"read","status":"pending","locations":[{"path":"/p/main.go"}],"rawInput":{"file_path":"/p/main.go"}}}`)
	p := []byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_01","status":"completed","content":[{"type":"content","content":{"type":"text","text":"` + strings.Repeat(`package main\n\nfunc main() {}\n`, 40) + `"}}],"_meta":{"claudeCode":{"toolName":"Read"}}}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		if _, err := c.Update(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendNotification(b *testing.B) {
	p := []byte(`{"sessionId":"9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me read the file to understand the structure of the project."},"messageId":"m"},"_meta":{"traceparent":"00-x"}}`)
	m := GatewayMeta{Seq: 123456, Epoch: "0c4e6a1e-0f7a-4b8e-9d55-1f2a3b4c5d6e", TurnID: "3a2b1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9"}
	dst := make([]byte, 0, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		var err error
		if dst, err = AppendNotification(dst[:0], "session/update", p, m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRedact500KB measures redaction of hostile tool output; ns/op over input size shows linearity
// (compare the 50KB and 500KB runs: the ratio should be about 10).
func BenchmarkRedact500KB(b *testing.B) {
	full := hostile500KB()
	small := append(append([]byte(nil), full[:50<<10]...), `"}`...)
	for _, bc := range []struct {
		name string
		v    []byte
	}{{"50KB", small}, {"500KB", full}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.v)))
			for b.Loop() {
				rawjson.Redact(bc.v)
			}
		})
	}
	b.Run("500KB-update-bounded", func(b *testing.B) {
		c := NewContext(Config{SessionID: "gw", MaxFieldBytes: 64 << 10, Redact: true})
		c.BeginTurn("t")
		p := []byte(`{"sessionId":"a","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","rawOutput":` + string(full) + `}}`)
		b.ReportAllocs()
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			if _, err := c.Update(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTerminalOutputChunk: one `_meta.terminal_output` update (about 256 bytes of build output) into a
// tool call whose accumulated output is already at its bound (SnapshotMaxMessageBytes 1 KiB, 64 KiB,
// 256 KiB, the default). The cost per chunk should not depend on how much is accumulated.
func BenchmarkTerminalOutputChunk(b *testing.B) {
	line := strings.Repeat(`\u001b[32mok\u001b[0m  github.com/acp-gateway/gateway/internal/x\t0.123s\r\n`, 4)
	p := []byte(metaUpdate("b1", `{"terminal_output":{"terminal_id":"b1","data":"`+line+`"}}`, ""))
	for _, acc := range []int{1 << 10, 64 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("accumulated=%dKiB", acc>>10), func(b *testing.B) {
			c := NewContext(Config{SessionID: "gw", MaxFieldBytes: 64 << 10, Redact: true, SnapshotMaxMessageBytes: acc})
			c.BeginTurn("t")
			mustUpdate(b, c, `{"sessionId":"a","update":{"sessionUpdate":"tool_call","toolCallId":"b1","title":"make","kind":"execute","status":"in_progress","_meta":{"terminal_info":{"terminal_id":"b1"}}}}`)
			for range acc/len(line) + 2 { // fill to the bound
				mustUpdate(b, c, string(p))
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := c.Update(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
