// Package admit checks what a session may run with against the operator's policy, when it is created and
// again before a stored session's agent runs again: its cwd and additionalDirectories resolved inside the
// workspace roots (no `..`, no symlink swapped in), and the MCP servers a client adds. It holds no session
// state.
package admit
