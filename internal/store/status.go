package store

// Status is a session's lifecycle state, as its directory entry records it and every face shows it.
type Status string

// Session statuses.
const (
	StatusStarting Status = "starting"
	StatusIdle     Status = "idle"
	StatusRunning  Status = "running"
	StatusClosed   Status = "closed"
	StatusFailed   Status = "failed"
	// StatusDetached is a stored session without an agent process (durable modes, docs/cluster.md §4).
	StatusDetached Status = "detached"
)

// ShareRole is what a principal the owner shared a session with may do.
type ShareRole string

// Share roles.
const (
	ShareViewer       ShareRole = "viewer"       // watch: the session's detail and streams
	ShareCollaborator ShareRole = "collaborator" // also prompt, cancel and answer permissions
)

// Share is one principal a session is shared with.
type Share struct {
	Principal string    `json:"principal"`
	Role      ShareRole `json:"role"`
}
