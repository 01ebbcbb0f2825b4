// Package agentlink holds what a session knows of its agent: the process that runs it now, the agent session
// it opened, what it answered to initialize and to its session's opening, and the login values to scrub.
// The session's lock guards a Link; the package takes no lock of its own.
package agentlink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acp-gateway/gateway/internal/agenterr"
	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/sessions/internal/views"
	"github.com/acp-gateway/gateway/internal/store"
)

// Link is a session's agent as the session knows it.
type Link struct {
	// Conn is the running agent: set by a start or a re-attach while the session is starting, nil once it is
	// detached.
	Conn *agents.Conn
	// SID is the agent's session id, set once before the session is idle; a re-attach loads the same one.
	SID string
	// Info, Caps and AuthMethods are the agent's initialize answer at its last start.
	Info, Caps, AuthMethods json.RawMessage
	// CanLoad and CanResume are whether the agent advertised loadSession and sessionCapabilities.resume.
	CanLoad, CanResume bool
	// Modes (SessionModeState) and ConfigOptions are as last known.
	Modes, ConfigOptions json.RawMessage
	// Secrets are the values of the login variables the agent was last started with (package agentlogin):
	// scrubbed from what the agent says back, as MCP secrets are.
	Secrets []string
}

// TakeView takes what a directory view says of the agent: its modes, config options and initialize answer.
func (l *Link) TakeView(dv views.DirView) {
	l.Modes, l.ConfigOptions = dv.Modes, dv.ConfigOptions
	l.Info, l.Caps = dv.AgentInfo, dv.AgentCapabilities
}

// TakeEntry takes what a directory entry and its view say of the agent, its session included.
func (l *Link) TakeEntry(e store.DirEntry, dv views.DirView) {
	l.TakeView(dv)
	l.SID, l.CanLoad, l.CanResume = e.AgentSessionID, e.CanLoad, e.CanResume
}

// DirView is what the directory keeps of the agent beside the log.
func (l *Link) DirView() views.DirView {
	return views.DirView{
		Modes: l.Modes, ConfigOptions: l.ConfigOptions,
		AgentInfo: NullToNil(l.Info), AgentCapabilities: NullToNil(l.Caps),
	}
}

// Resumability is the agent session and what the agent advertised at its last start.
func (l *Link) Resumability() views.Resumability {
	return views.Resumability{AgentSessionID: l.SID, CanLoad: l.CanLoad, CanResume: l.CanResume}
}

// NoteInitialize records an initialize answer and what it says about taking a session back.
func (l *Link) NoteInitialize(info, caps, authMethods json.RawMessage, canLoad, canResume bool) {
	l.Info, l.Caps, l.AuthMethods = info, caps, authMethods
	l.CanLoad, l.CanResume = canLoad, canResume
}

// SetMode records modeID as the current mode of the known modes.
func (l *Link) SetMode(modeID string) {
	if len(l.Modes) == 0 {
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(l.Modes, &m) == nil {
		m["currentModeId"], _ = json.Marshal(modeID)
		l.Modes, _ = json.Marshal(m)
	}
}

// TakeConfigOptions records the options a session/set_config_option answer (res) lists, when it lists any,
// and returns the options now known ([] when none).
func (l *Link) TakeConfigOptions(res json.RawMessage) json.RawMessage {
	var r struct {
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	_ = json.Unmarshal(res, &r) // a malformed answer lists none: the options known stay
	if len(NullToNil(r.ConfigOptions)) > 0 {
		l.ConfigOptions = r.ConfigOptions
	}
	if l.ConfigOptions == nil {
		return json.RawMessage(`[]`)
	}
	return l.ConfigOptions
}

// NullToNil reads a JSON null as absent.
func NullToNil(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return b
}

// CallError turns an SDK error into one that says what happened: a deadline becomes "did not answer within".
func CallError(ctx context.Context, err error, limit time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("agent did not answer within %s", limit)
	}
	return agenterr.Clean(err)
}
