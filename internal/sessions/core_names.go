package sessions

import (
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/sessions/internal/access"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/sessions/internal/pending"
	"github.com/acp-gateway/gateway/internal/sessions/internal/services"
	"github.com/acp-gateway/gateway/internal/sessions/internal/stream"
	"github.com/acp-gateway/gateway/internal/sessions/internal/turns"
	"github.com/acp-gateway/gateway/internal/sessions/internal/views"
	"github.com/acp-gateway/gateway/internal/store"
)

// The session core's names the faces use: the core lives in internal/core, which only this package may
// import, so the faces name it through these aliases.

type (
	Access           = access.Access
	AgentDeletion    = core.AgentDeletion
	Detail           = views.Detail
	DirView          = views.DirView
	ElicitationView  = pending.ElicitationView
	FSDelegate       = services.FSDelegate
	FilesOptions     = services.FilesOptions
	LastTurnView     = turns.LastTurnView
	PermissionView   = pending.PermissionView
	PromptOptions    = core.PromptOptions
	Resumability     = views.Resumability
	Session          = core.Session
	Sink             = stream.Sink
	Start            = stream.Start
	Subscriber       = core.Subscriber
	TerminalDelegate = services.TerminalDelegate
	Turn             = turns.Turn
	TurnResult       = turns.TurnResult
	TurnState        = turns.TurnState
	TurnView         = turns.TurnView
	View             = views.View
	Watcher          = stream.Watcher
)

const (
	MaxPromptKeys           = turns.MaxPromptKeys
	MaxTitleRunes           = core.MaxTitleRunes
	PresenceDelay           = stream.PresenceDelay
	AccessAct               = access.Act
	AccessNone              = access.None
	AccessOwn               = access.Own
	AccessView              = access.View
	AgentDeleteError        = core.AgentDeleteError
	AgentDeleted            = core.AgentDeleted
	AgentUnsupported        = core.AgentUnsupported
	DefaultFileLimit        = services.DefaultFileLimit
	MaxFileLimit            = services.MaxFileLimit
	MaxFileQuery            = services.MaxFileQuery
	PolicyApproveAll        = pending.PolicyApproveAll
	PolicyApproveReads      = pending.PolicyApproveReads
	PolicyAsk               = pending.PolicyAsk
	PolicyDenyAll           = pending.PolicyDenyAll
	TurnAwaitingElicitation = turns.TurnAwaitingElicitation
	TurnAwaitingPermission  = turns.TurnAwaitingPermission
	TurnEnded               = turns.TurnEnded
	TurnRunning             = turns.TurnRunning
)

// ParsePrompt validates a prompt: a non-empty array of ContentBlocks, each an object with a string `type`.
func ParsePrompt(raw json.RawMessage) ([]json.RawMessage, error) { return turns.ParsePrompt(raw) }

// ParseShareRole accepts "viewer" and "collaborator".
func ParseShareRole(v string) (store.ShareRole, error) { return access.ParseShareRole(v) }
