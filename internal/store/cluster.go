package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
)

// Cluster is what many gateway nodes share on one NATS cluster (mode c, docs/cluster.md §5): which nodes are
// alive (a heartbeat key per node) and a request/reply subject per node on which commands reach a session's
// owner. It is implemented by internal/store/jsstore.
type Cluster interface {
	// Self is this node as it beats.
	Self() NodeInfo
	// Nodes lists the live nodes (their key is present), this one included, sorted by id.
	Nodes() []NodeInfo
	// WatchNodes calls fn with a NodeJoined event for every live node, then with each join, beat and loss,
	// until the returned stop is called, and with a NodeJoined of this node itself when its key expired and
	// its beat created it again (the others may have declared it lost meanwhile). fn runs on one of the
	// cluster's goroutines: it must not block or call WatchNodes.
	WatchNodes(fn func(NodeEvent)) (stop func())
	// Call sends cmd to node's command subject and waits for its reply, at most cmd's bound plus RouteSlack. An
	// error the owner returned comes back in the Reply (the session core turns it back into its sentinel); no
	// node listening is ErrOwnerUnavailable; no reply in time is ErrOwnerTimeout.
	Call(ctx context.Context, node string, cmd Command) (Reply, error)
	// Serve answers the commands sent to this node with h until ctx ends or the cluster closes. It returns once
	// the subscription is registered with the server; each command runs h on its own goroutine with a context
	// bounded by the command's bound.
	Serve(ctx context.Context, h CommandHandler) error
	// Displaced is closed when another incarnation took this node's id: this process must stop owning
	// sessions (docs/cluster.md §5, isolation).
	Displaced() <-chan struct{}
}

// NodeTTL is how long a node's heartbeat key lives after its last beat (docs/cluster.md §5): a node silent
// for that long is lost.
const NodeTTL = 6 * time.Second

// LossGuard is implemented by a Cluster that knows whether this node may declare other nodes lost now: its
// own beats have succeeded for a TTL, so a node missing from Nodes is gone and not hidden by this node's own
// outage. A Cluster without it is taken to be always open.
type LossGuard interface {
	MayDeclareLoss() bool
}

// StoreHealth is implemented by a Cluster that knows whether its store can make progress now (it took this
// node's last heartbeat less than a TTL ago). A follower stops waiting for frames that cannot come while it
// cannot. A Cluster without it is taken to be always healthy.
type StoreHealth interface {
	Healthy() bool
}

// NodeInfo is a node's heartbeat value in the nodes bucket.
type NodeInfo struct {
	ID          string     `json:"id"`
	Incarnation string     `json:"incarnation"` // one per process: a restart is a new incarnation
	URL         string     `json:"url,omitempty"`
	Agents      []string   `json:"agents,omitempty"`
	Version     string     `json:"version,omitempty"`
	StartedAt   time.Time  `json:"startedAt"`
	Store       StoreState `json:"store"`
}

// StoreState is a node's write-behind health as GET /v1/nodes shows it (docs/cluster.md §3).
type StoreState struct {
	State                string  `json:"state"` // ok, lagging or down
	LagFrames            uint64  `json:"lagFrames"`
	LagBytes             int64   `json:"lagBytes"`
	OldestUnackedSeconds float64 `json:"oldestUnackedSeconds"`
}

// NodeEventKind says what happened to a node.
type NodeEventKind string

// Node events.
const (
	NodeJoined NodeEventKind = "joined" // its key appeared (or came back before its loss was declared)
	NodeBeat   NodeEventKind = "beat"   // it beat again
	NodeLost   NodeEventKind = "lost"   // the incarnation in Node is gone; Reason says how
)

// Reasons of a NodeLost event.
const (
	LossDeleted  = "deleted"  // its key was deleted (a clean leave)
	LossExpired  = "expired"  // its key expired: no beat for a TTL
	LossReplaced = "replaced" // another incarnation holds its id
)

// NodeEvent is one change in the set of live nodes.
type NodeEvent struct {
	Kind   NodeEventKind
	Node   NodeInfo // for NodeLost, the last value of the incarnation that was lost
	Reason string   // NodeLost only
}

// RouteSlack is what Call adds to a command's own bound: the way to the owner and back.
const RouteSlack = 2 * time.Second

// DefaultCommandBound is a command's bound when it names none.
const DefaultCommandBound = 30 * time.Second

// Command is a session operation routed to the session's owner.
type Command struct {
	Op        string              `json:"op"` // the Session method, e.g. "prompt", "cancel", "answer"
	SID       string              `json:"sid,omitempty"`
	Args      json.RawMessage     `json:"args,omitempty"`
	Principal principal.Principal `json:"principal"` // who asked: the owner checks and records it as locally
	// Bound is how long the operation may take on the owner (0 = DefaultCommandBound); the caller waits
	// RouteSlack longer.
	Bound time.Duration `json:"boundNs,omitempty"`
}

// Timeout is how long the caller waits for cmd's reply.
func (c Command) Timeout() time.Duration { return c.bound() + RouteSlack }

func (c Command) bound() time.Duration {
	if c.Bound > 0 {
		return c.Bound
	}
	return DefaultCommandBound
}

// HandlerContext bounds ctx by the command's own bound: the context a CommandHandler gets.
func (c Command) HandlerContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.bound())
}

// CommandHandler runs a command on the owner.
type CommandHandler func(ctx context.Context, cmd Command) Reply

// Reply is the owner's answer to a Command.
type Reply struct {
	Result json.RawMessage `json:"result,omitempty"`
	Head   uint64          `json:"head,omitempty"` // the session log's head after the operation
	Error  *ReplyError     `json:"error,omitempty"`
}

// ReplyError is an error as it crosses to the caller: its stable code (sessionerr.ErrorCode) and text, and for
// an agent's error what the agent said.
type ReplyError struct {
	Code    string      `json:"code"`
	Message string      `json:"message"`
	Agent   *AgentFault `json:"agent,omitempty"`
	Turn    *TurnRef    `json:"turn,omitempty"` // the running turn a turn_running names
}

// TurnRef names a turn and who started it (nil: the gateway's own code).
type TurnRef struct {
	ID        string         `json:"id"`
	StartedBy *principal.Ref `json:"startedBy,omitempty"`
}

// AgentFault is an agent's error (sessionerr.AgentError) on the wire: the request that failed, the agent's JSON-RPC error when it sent
// one, the error's text and the agent's stderr tail.
type AgentFault struct {
	Op       string          `json:"op"`
	RPC      bool            `json:"rpc,omitempty"` // Code, Message and Data are the agent's JSON-RPC error
	Code     int             `json:"code,omitempty"`
	Message  string          `json:"message,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	DataText bool            `json:"dataText,omitempty"` // Data is clipped text (a JSON string), not the agent's JSON
	Error    string          `json:"error"`              // the failure's text (AgentError.Err)
	Stderr   string          `json:"stderr,omitempty"`
	Start    bool            `json:"start,omitempty"` // the agent's process could not be started (IsStartFailure)
}

// Codes the command layer replies with when it fails a command itself (the command does not decode, the
// reply is too large); the session core's error table gives them the same meaning.
const (
	CodeBadRequest = "bad_request"
	CodeInternal   = "internal"
)

// ErrorReply is the Reply of a command the command layer failed itself, with the error's code and text.
func ErrorReply(head uint64, code, msg string) Reply {
	return Reply{Head: head, Error: &ReplyError{Code: code, Message: msg}}
}

// Routing errors (the REST face answers 503 owner_unavailable for both).
var (
	ErrOwnerUnavailable = errors.New("the session's node is not available")
	// ErrOwnerTimeout is an ErrOwnerUnavailable: the owner may still act on the command.
	ErrOwnerTimeout = fmt.Errorf("%w: it did not answer in time", ErrOwnerUnavailable)
)
