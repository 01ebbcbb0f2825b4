package core

import (
	"github.com/acp-gateway/gateway/internal/sessions/internal/agentlink"
	"github.com/acp-gateway/gateway/internal/sessions/internal/views"
	"github.com/acp-gateway/gateway/internal/store"
)

// View returns the session's current state. LastSeq is the seq of the newest frame the view reflects.
func (s *Session) View() views.View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.viewLocked()
}

func (s *Session) viewLocked() views.View {
	_, last := s.log.Bounds()
	v := views.View{
		ID: s.ID, Title: s.tctx.Title(), Agent: s.Agent, Cwd: s.Cwd, AdditionalDirs: s.AdditionalDirs, Status: s.state.Status, StatusReason: s.state.Reason, Epoch: s.epochLocked(),
		LastSeq: last, CreatedAt: s.CreatedAt, PermissionPolicy: s.Policy, Clients: s.clients,
		Modes: s.agent.Modes, ConfigOptions: s.agent.ConfigOptions,
		AgentInfo: agentlink.NullToNil(s.agent.Info), AgentCapabilities: agentlink.NullToNil(s.agent.Caps),
		PendingPermissions: s.state.Perms.PermissionViews(), PendingElicitations: s.state.Perms.ElicitationViews(),
	}
	v.LastTurn = s.state.LastTurn // never mutated once set: finishTurn replaces it
	if c := s.cold; c != nil {    // listed from its directory entry
		v.Title, v.LastSeq, v.LastTurn, v.Status, v.StatusReason = c.Title, c.LastSeq, c.LastTurn, c.Status, c.Reason
	}
	s.run.PlaceLocked(&v)
	if t := s.state.Turn; t != nil {
		v.CurrentTurn = t.View()
	}
	return v
}

// Status returns the session's status.
func (s *Session) Status() store.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Status
}

// ForkedAt is the seq of the last inherited frame of a fork's log (0 for a session that is no fork): an ACP
// client of the fork, which has the source's history already, streams from there.
func (s *Session) ForkedAt() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forkedAt
}

// Detail returns the session with its snapshot, consistent with one seq, so a client can load it and then
// stream with `after=lastSeq`. The state is frozen under mu and the snapshot document (megabytes) is built
// after unlocking: the agent's updates need mu and must not wait for a client loading the transcript.
func (s *Session) Detail() views.Detail {
	s.mu.Lock()
	v := s.viewLocked()
	frozen := s.tctx.FreezeSnapshot(v.LastSeq)
	s.mu.Unlock()
	if s.beforeSnapshotJSON != nil {
		s.beforeSnapshotJSON()
	}
	return views.Detail{View: v, Watchers: s.Watchers(), Snapshot: frozen.JSON()}
}

// Replay returns the transcript as `session/update` params for an ACP `session/load`, and the seq it reflects.
func (s *Session) Replay() ([][]byte, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, last := s.log.Bounds()
	return s.tctx.Replay(), last
}
