package sessions

import (
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
)

// The session core's names the faces use: the core lives in internal/core, which only this package may
// import, so the faces name it through these aliases.

type (
	Access           = core.Access
	AgentDeletion    = core.AgentDeletion
	Detail           = core.Detail
	DirView          = core.DirView
	ElicitationView  = core.ElicitationView
	FSDelegate       = core.FSDelegate
	FilesOptions     = core.FilesOptions
	LastTurnView     = core.LastTurnView
	PermissionView   = core.PermissionView
	PromptOptions    = core.PromptOptions
	Resumability     = core.Resumability
	Session          = core.Session
	Sink             = core.Sink
	Start            = core.Start
	Subscriber       = core.Subscriber
	TerminalDelegate = core.TerminalDelegate
	Turn             = core.Turn
	TurnResult       = core.TurnResult
	TurnState        = core.TurnState
	TurnView         = core.TurnView
	View             = core.View
	Watcher          = core.Watcher
)

const (
	MaxPromptKeys           = core.MaxPromptKeys
	MaxTitleRunes           = core.MaxTitleRunes
	PresenceDelay           = core.PresenceDelay
	AccessAct               = core.AccessAct
	AccessNone              = core.AccessNone
	AccessOwn               = core.AccessOwn
	AccessView              = core.AccessView
	AgentDeleteError        = core.AgentDeleteError
	AgentDeleted            = core.AgentDeleted
	AgentUnsupported        = core.AgentUnsupported
	DefaultFileLimit        = core.DefaultFileLimit
	MaxFileLimit            = core.MaxFileLimit
	MaxFileQuery            = core.MaxFileQuery
	PolicyApproveAll        = core.PolicyApproveAll
	PolicyApproveReads      = core.PolicyApproveReads
	PolicyAsk               = core.PolicyAsk
	PolicyDenyAll           = core.PolicyDenyAll
	TurnAwaitingElicitation = core.TurnAwaitingElicitation
	TurnAwaitingPermission  = core.TurnAwaitingPermission
	TurnEnded               = core.TurnEnded
	TurnRunning             = core.TurnRunning
)

// ParsePrompt validates a prompt: a non-empty array of ContentBlocks, each an object with a string `type`.
func ParsePrompt(raw json.RawMessage) ([]json.RawMessage, error) { return core.ParsePrompt(raw) }

// ParseShareRole accepts "viewer" and "collaborator".
func ParseShareRole(v string) (store.ShareRole, error) { return core.ParseShareRole(v) }
