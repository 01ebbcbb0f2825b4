package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// echoPrompt is the echo mode's turn: one message chunk saying what the agent received, so a test can check
// what a client's prompt became on the agent's side. One line per content block ("image image/png 68 bytes",
// "resource file:///a.txt text/plain 12 bytes", "text 5 bytes"), the trace context the prompt's `_meta`
// carried ("meta traceparent 00-…", "meta tracestate …") and a last line with the clientCapabilities the
// gateway sent in initialize ("clientCapabilities {…}").
func (a *agent) echoPrompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	var b strings.Builder
	for _, c := range p.Prompt {
		switch {
		case c.Text != nil:
			fmt.Fprintf(&b, "text %d bytes\n", len(c.Text.Text))
		case c.Image != nil:
			n := -1
			if raw, err := base64.StdEncoding.DecodeString(c.Image.Data); err == nil {
				n = len(raw)
			}
			fmt.Fprintf(&b, "image %s %d bytes\n", c.Image.MimeType, n)
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			mime := ""
			if r.MimeType != nil {
				mime = *r.MimeType
			}
			fmt.Fprintf(&b, "resource %s %s %d bytes\n", r.Uri, mime, len(r.Text))
		default:
			b.WriteString("other block\n")
		}
	}
	for _, k := range []string{"traceparent", "tracestate"} {
		if v, ok := p.Meta[k].(string); ok {
			fmt.Fprintf(&b, "meta %s %s\n", k, v)
		}
	}
	if a.hangMode {
		if err := a.update(context.Background(), p.SessionId, acp.UpdateAgentMessageText("waiting for a cancelled set_mode\n")); err != nil {
			return acp.PromptResponse{}, err
		}
		select {
		case <-a.modeGone:
			b.WriteString("set_mode cancelled\n")
		case <-ctx.Done():
			return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
		}
	}
	a.mu.Lock()
	caps, dirs := a.clientCaps, a.dirs[p.SessionId]
	a.mu.Unlock()
	if len(dirs) > 0 {
		fmt.Fprintf(&b, "additionalDirectories %v\n", dirs)
	}
	b.WriteString(a.sessionLines(p.SessionId))
	fmt.Fprintf(&b, "clientCapabilities %s", caps)
	if err := a.update(context.Background(), p.SessionId, acp.UpdateAgentMessageText(b.String())); err != nil {
		return acp.PromptResponse{}, err
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// recordDirs keeps the additionalDirectories session/new, load or resume gave a session, for echoPrompt.
func (a *agent) recordDirs(sid acp.SessionId, dirs []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dirs == nil {
		a.dirs = map[acp.SessionId][]string{}
	}
	a.dirs[sid] = dirs
}

// recordClientCaps keeps the clientCapabilities of initialize for echoPrompt.
func (a *agent) recordClientCaps(caps acp.ClientCapabilities) {
	raw, _ := json.Marshal(caps)
	a.mu.Lock()
	a.clientCaps = string(raw)
	a.mu.Unlock()
}
