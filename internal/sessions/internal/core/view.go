package core

import (
	"encoding/json"
	"time"

	"github.com/acp-gateway/gateway/internal/store"
)

// View is a session as REST clients see it.
type View struct {
	ID                 string           `json:"id"`
	Title              string           `json:"title,omitempty"`
	Agent              string           `json:"agent"`
	Cwd                string           `json:"cwd"`
	AdditionalDirs     []string         `json:"additionalDirectories,omitempty"`
	Status             store.Status     `json:"status"`
	StatusReason       string           `json:"statusReason,omitempty"`
	Epoch              string           `json:"epoch"`
	LastSeq            uint64           `json:"lastSeq"`
	CreatedAt          time.Time        `json:"createdAt"`
	PermissionPolicy   string           `json:"permissionPolicy"`
	Clients            int              `json:"clients"`
	Modes              json.RawMessage  `json:"modes,omitempty"`
	ConfigOptions      json.RawMessage  `json:"configOptions,omitempty"`
	AgentInfo          json.RawMessage  `json:"agentInfo,omitempty"`
	AgentCapabilities  json.RawMessage  `json:"agentCapabilities,omitempty"`
	CurrentTurn        *TurnView        `json:"currentTurn"`
	LastTurn           *LastTurnView    `json:"lastTurn,omitempty"`
	PendingPermissions []PermissionView `json:"pendingPermissions"`
	// PendingElicitations are the agent's questions waiting for a user (never null).
	PendingElicitations []ElicitationView `json:"pendingElicitations"`
	// DurableSeq is the seq up to which the store holds the log (store modes; omitted in memory mode).
	DurableSeq *uint64 `json:"durableSeq,omitempty"`
	// Node is the node that owns the session: runs its agent and writes its log (mode c only).
	Node string `json:"node,omitempty"`
}

// View returns the session's current state. LastSeq is the seq of the newest frame the view reflects.
func (s *Session) View() View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.viewLocked()
}

func (s *Session) viewLocked() View {
	_, last := s.log.Bounds()
	v := View{
		ID: s.ID, Title: s.tctx.Title(), Agent: s.Agent, Cwd: s.Cwd, AdditionalDirs: s.AdditionalDirs, Status: s.status, StatusReason: s.statusReason, Epoch: s.epochLocked(),
		LastSeq: last, CreatedAt: s.CreatedAt, PermissionPolicy: s.Policy, Clients: s.clients,
		Modes: s.modes, ConfigOptions: s.configOptions,
		AgentInfo: NullToNil(s.initInfo.AgentInfo), AgentCapabilities: NullToNil(s.initInfo.AgentCapabilities),
		PendingPermissions: s.perms.PermissionViews(), PendingElicitations: s.perms.ElicitationViews(),
	}
	v.LastTurn = s.lastTurn    // never mutated once set: finishTurn replaces it
	if c := s.cold; c != nil { // listed from its directory entry
		v.Title, v.LastSeq, v.LastTurn, v.Status, v.StatusReason = c.title, c.lastSeq, c.lastTurn, c.status, c.reason
	}
	s.run.PlaceLocked(&v)
	if t := s.turn; t != nil {
		v.CurrentTurn = t.View()
	}
	return v
}

// Status returns the session's status.
func (s *Session) Status() store.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// ForkedAt is the seq of the last inherited frame of a fork's log (0 for a session that is no fork): an ACP
// client of the fork, which has the source's history already, streams from there.
func (s *Session) ForkedAt() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forkedAt
}

// Detail is View plus the snapshot of the transcript; LastSeq and the snapshot's seq are the same point.
type Detail struct {
	View
	Watchers []Watcher       `json:"watchers"` // who streams the session now (presence.go)
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
}

// Detail returns the session with its snapshot, consistent with one seq, so a client can load it and then
// stream with `after=lastSeq`. The state is frozen under mu and the snapshot document (megabytes) is built
// after unlocking: the agent's updates need mu and must not wait for a client loading the transcript.
func (s *Session) Detail() Detail {
	s.mu.Lock()
	v := s.viewLocked()
	frozen := s.tctx.FreezeSnapshot(v.LastSeq)
	s.mu.Unlock()
	if s.beforeSnapshotJSON != nil {
		s.beforeSnapshotJSON()
	}
	return Detail{View: v, Watchers: s.Watchers(), Snapshot: frozen.JSON()}
}

// Replay returns the transcript as `session/update` params for an ACP `session/load`, and the seq it reflects.
func (s *Session) Replay() ([][]byte, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, last := s.log.Bounds()
	return s.tctx.Replay(), last
}
