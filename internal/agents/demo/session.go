package demo

import (
	"context"

	"github.com/coder/acp-go-sdk"

	"github.com/acp-gateway/gateway/internal/agents/inproc"
)

// Mode and config values the demo agent offers. They are state only: a turn
// looks the same in every mode and style.
const (
	modeDefault acp.SessionModeId = "default"
	modePlan    acp.SessionModeId = "plan"

	configStyle acp.SessionConfigId      = "style"
	stylePlain  acp.SessionConfigValueId = "plain"
	styleFancy  acp.SessionConfigValueId = "fancy"
)

// session is the state of one conversation. Fields other than id and cwd are
// guarded by agent.mu.
type session struct {
	id  acp.SessionId // Static after construction.
	cwd string        // Static after construction.

	mode        acp.SessionModeId
	style       acp.SessionConfigValueId
	turns       int                // Number of prompts accepted so far.
	firstPrompt string             // Text of the first prompt, for the title.
	titled      bool               // A session_info_update title was sent.
	used        int                // Made-up context tokens, reported in usage_update.
	cancelTurn  context.CancelFunc // Non-nil while a turn runs.
	// announced is closed once the available_commands_update that follows session/new is sent (nil for a
	// loaded session): a prompt waits for it, so a client that prompts at once still sees the commands first.
	announced chan struct{}
}

func newSession(id acp.SessionId, cwd string) *session {
	return &session{id: id, cwd: cwd, mode: modeDefault, style: stylePlain}
}

// modeState describes the modes with the current one. Caller holds agent.mu.
func (s *session) modeState() *acp.SessionModeState {
	return &acp.SessionModeState{
		CurrentModeId: s.mode,
		AvailableModes: []acp.SessionMode{
			{Id: modeDefault, Name: "Default"},
			{Id: modePlan, Name: "Plan only"},
		},
	}
}

// configOptions is the full config option list. Caller holds agent.mu.
func (s *session) configOptions() []acp.SessionConfigOption {
	choices := acp.SessionConfigSelectOptionsUngrouped{
		{Value: stylePlain, Name: "Plain"},
		{Value: styleFancy, Name: "Fancy"},
	}
	return []acp.SessionConfigOption{{Select: &acp.SessionConfigOptionSelect{
		Id:           configStyle,
		Name:         "Answer style",
		Type:         "select",
		CurrentValue: s.style,
		Options:      acp.SessionConfigSelectOptions{Ungrouped: &choices},
	}}}
}

// availableCommands is the update sent after session/new.
func availableCommands() acp.SessionUpdate {
	return acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{
		AvailableCommands: []acp.AvailableCommand{
			{Name: "help", Description: "Explain what the demo agent does"},
			{Name: "echo", Description: "Repeat the given text", Input: &acp.AvailableCommandInput{
				Unstructured: &acp.UnstructuredCommandInput{Hint: "text to echo"},
			}},
		},
	}}
}

// SetSessionMode implements acp.Agent. The current_mode_update is sent
// before the reply so that a client has seen it when its call returns
// (acp-go-sdk delivers notifications read before a response first).
func (a *agent) SetSessionMode(_ context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	if p.ModeId != modeDefault && p.ModeId != modePlan {
		return acp.SetSessionModeResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown mode", "modeId": string(p.ModeId)})
	}
	if !a.work.Enter() {
		return acp.SetSessionModeResponse{}, errShuttingDown
	}
	defer a.work.Leave()

	a.mu.Lock()
	s := a.sessions[p.SessionId]
	if s == nil {
		a.mu.Unlock()
		return acp.SetSessionModeResponse{}, inproc.UnknownSession(p.SessionId)
	}
	s.mode = p.ModeId
	a.mu.Unlock()

	update := acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: p.ModeId}}
	if err := a.conn.SessionUpdate(a.base, acp.SessionNotification{SessionId: p.SessionId, Update: update}); err != nil {
		return acp.SetSessionModeResponse{}, err
	}
	return acp.SetSessionModeResponse{}, nil
}

// SetSessionConfigOption implements acp.Agent. Like SetSessionMode, it sends
// the config_option_update before the reply.
func (a *agent) SetSessionConfigOption(_ context.Context, p acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	v := p.ValueId
	if v == nil {
		return acp.SetSessionConfigOptionResponse{}, acp.NewInvalidParams(map[string]any{"error": "only select values are supported"})
	}
	if v.ConfigId != configStyle {
		return acp.SetSessionConfigOptionResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown config option", "configId": string(v.ConfigId)})
	}
	if v.Value != stylePlain && v.Value != styleFancy {
		return acp.SetSessionConfigOptionResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown value", "value": string(v.Value)})
	}
	if !a.work.Enter() {
		return acp.SetSessionConfigOptionResponse{}, errShuttingDown
	}
	defer a.work.Leave()

	a.mu.Lock()
	s := a.sessions[v.SessionId]
	if s == nil {
		a.mu.Unlock()
		return acp.SetSessionConfigOptionResponse{}, inproc.UnknownSession(v.SessionId)
	}
	s.style = v.Value
	options := s.configOptions()
	a.mu.Unlock()

	update := acp.SessionUpdate{ConfigOptionUpdate: &acp.SessionConfigOptionUpdate{ConfigOptions: options}}
	if err := a.conn.SessionUpdate(a.base, acp.SessionNotification{SessionId: v.SessionId, Update: update}); err != nil {
		return acp.SetSessionConfigOptionResponse{}, err
	}
	return acp.SetSessionConfigOptionResponse{ConfigOptions: options}, nil
}
