// Package sessions is the registry: the single owner of every session's state.
//
// A Session owns its agent connection, its translation context, the running turn and its cancel state, the
// pending permission requests and an append-only event log (internal/eventlog). Agents write into a session
// (their handler calls only append to the log and return); faces (WebSocket, SSE, REST) read the log and call
// the session's methods.
// No face talks to an agent directly, and no lock is held across I/O or a whole turn.
//
// The Session itself is the core (internal/core, named here through the aliases in core_names.go); this
// package holds the registry and the live role (the local runner and the agent's lifecycle). The other roles
// are packages under internal/ that ask the registry through a Host of their own: follow (a copy of another
// node's session), durable (the store link) and takeover (stored logs left open); login and admit hold no
// session state.
package sessions
