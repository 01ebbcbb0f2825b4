// Package confine keeps the processes the gateway starts for agents (agents, their terminals, the MCP servers
// they start) out of what is the gateway's: its data dir, users and token files, its /proc entries, other
// sessions' directories. Landlock is applied by a process to itself, so a confined command is started as the
// gateway's own binary, which restricts itself in this package's init and then executes the real command
// (helper.go); Wrap (wrap.go) prepares the command, carving what may be granted (carve.go).
package confine
