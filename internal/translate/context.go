package translate

import (
	"encoding/json"
	"fmt"
)

// Config is what a session's translation needs to know. The zero value of each limit disables it.
type Config struct {
	SessionID     string // the gateway's session id; replaces the agent's in every frame
	Cwd           string // the session's absolute working directory
	MaxFieldBytes int    // bound on tool-call content, rawInput, rawOutput; 0 = unbounded
	Redact        bool   // redact secrets in tool-call fields and titles
}

// Context is one session's translation state. It is owned by the session (callers serialise access).
type Context struct {
	cfg    Config
	turnID string
}

// NewContext returns the translation state for one session.
func NewContext(cfg Config) *Context { return &Context{cfg: cfg} }

// BeginTurn starts a new turn: message ids minted from now on are scoped to it.
func (c *Context) BeginTurn(turnID string) { c.turnID = turnID }

// Update is one agent `session/update` translated for clients.
type Update struct {
	Params    []byte // the notification params to log and send, sessionId rewritten
	Kind      string // update.sessionUpdate
	Text      string // for agent_message_chunk with text content: the text
	Truncated bool   // a field was cut to the payload bound
}

// Update translates one agent `session/update` params object.
func (c *Context) Update(params []byte) (Update, error) {
	out, err := RewriteSessionID(nil, params, c.cfg.SessionID)
	if err != nil {
		return Update{}, err
	}
	var probe struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	}
	if err := json.Unmarshal(params, &probe); err != nil {
		return Update{}, fmt.Errorf("session/update: %w", err)
	}
	u := Update{Params: out, Kind: probe.Update.SessionUpdate}
	if u.Kind == "agent_message_chunk" && probe.Update.Content.Type == "text" {
		u.Text = probe.Update.Content.Text
	}
	return u, nil
}

// EndTurn closes the turn. When reason is not empty (cancelled, agent died), it returns a terminal
// `tool_call_update` params object (status failed, `_meta.gateway.reason`) for every tool call still open.
func (c *Context) EndTurn(reason string) [][]byte {
	c.turnID = ""
	return nil
}
