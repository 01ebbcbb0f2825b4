package main

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// echoTurn sends body as a prompt to a session of the echo test agent and returns the turn's text: what the
// agent says it received.
func echoTurn(t *testing.T, g *gateway, body any) string {
	t.Helper()
	s := g.createSession(nil)
	var res struct {
		StopReason string
		Text       string
	}
	if code := g.do("POST", "/v1/sessions/"+s.ID+"/prompt?wait=true", body, &res); code != http.StatusOK || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %d %+v", code, res)
	}
	return res.Text
}

// TestInitializeAdvertisesTerminalOutput: the gateway tells agents that its clients render live terminal
// output (`clientCapabilities._meta.terminal_output`), so claude-agent-acp sends a Bash call's output as
// `_meta.terminal_output` for the UI's terminal pane instead of a Markdown code block.
func TestInitializeAdvertisesTerminalOutput(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "echo")
	text := echoTurn(t, g, map[string]any{"text": "hi"})
	if !strings.Contains(text, `"_meta":{"terminal_output":true}`) {
		t.Fatalf("the agent was not told about terminal_output; it says:\n%s", text)
	}
}

// TestPromptAttachmentsReachTheAgent: an image and an embedded text resource given as ACP content blocks in
// the REST prompt reach the agent whole (the web UI's attachments).
func TestPromptAttachmentsReachTheAgent(t *testing.T) {
	t.Parallel()
	g, _ := testAgentGateway(t, "echo")
	png := []byte("\x89PNG\r\n\x1a\n fake image bytes")
	text := echoTurn(t, g, map[string]any{"prompt": []any{
		map[string]any{"type": "text", "text": "look"},
		map[string]any{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(png)},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "twelve bytes"}},
	}})
	for _, want := range []string{"text 4 bytes\n", "image image/png 25 bytes\n", "resource file:///notes.txt text/plain 12 bytes\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("the agent did not get %q; it says:\n%s", want, text)
		}
	}
}
