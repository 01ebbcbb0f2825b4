package admit

// Policy is the operator's rules for what a session may run with; the registry builds it once from its
// settings.
type Policy struct {
	// Roots confine session cwds and additionalDirectories; empty = Workdir only.
	Roots   []string
	Workdir string
	// AllowClientMCPStdio lets clients add stdio MCP servers (a client-chosen command on the gateway's host).
	AllowClientMCPStdio bool
}
