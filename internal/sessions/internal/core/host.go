package core

import (
	"log/slog"
	"os"
	"time"

	"github.com/acp-gateway/gateway/internal/confine"
	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/metrics"
	"github.com/acp-gateway/gateway/internal/telemetry"
)

// Host is what the session core asks of the registry that holds its sessions, so that the core uses nothing
// of the registry (which imports it); the registry is the one implementation.
type Host interface {
	// SessionConfig is the settings every session of this host reads: one value, static once the host is made.
	SessionConfig() *SessionConfig
	Now() time.Time
	// ShuttingDown reports whether the host's shutdown has begun (it takes the registry's lock).
	ShuttingDown() bool
	// Reconfine opens a stored directory again and checks it against today's workspace roots (recheck.go).
	Reconfine(dir string) (*os.Root, error)
	// EntryChanged tells the store that s's directory entry changed: its status, title, modes… It never
	// blocks.
	EntryChanged(s *Session)
}

// SessionConfig is the part of Config the session core reads; zero values were replaced by their defaults
// (Config.withDefaults) before it is made.
type SessionConfig struct {
	Log                    eventlog.LogLimits
	Logger                 *slog.Logger
	Metrics                *metrics.Metrics
	Tracer                 *telemetry.Tracer
	MaxClients             int
	MaxFieldBytes          int
	Redact                 bool
	MaxPromptBytes         int64
	MaxTurnTextBytes       int
	CallTimeout            time.Duration
	CancelGrace            time.Duration
	PermissionTimeout      time.Duration
	StopGrace              time.Duration
	QuietNotice            time.Duration
	MaxFSRequests          int
	MaxTerminalsPerSession int
	AgentEnv               []string
	Confiner               *confine.Confiner
}
