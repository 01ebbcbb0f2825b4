// Package events runs agents that speak the gateway's native event dialect (docs/events.md) and serves
// them as ACP agents.
//
// Serve is an in-process ACP agent (acp-go-sdk's AgentSideConnection over the given streams, the same
// shape as the built-in demo agent), so the rest of the gateway sees an events agent exactly like any other
// ACP agent: the lead wires it in as an agents.BuiltinFunc. Per ACP session it spawns the configured
// process in the session's cwd, in its own process group, with exactly the configured environment (plus the
// agents.ProcessTree marker) and its stderr drained into a bounded buffer; each write to its stdin has a
// deadline (Config.WriteTimeout, shared with ACP agents: agents.NewStdinWriter), and whatever the process
// started is killed when it ends (agents.ProcessTree). Per prompt it writes a `prompt` event to the process's stdin and
// translates what the process prints (internal/translate/events does the mapping, purely) into
// `session/update`s, `session/request_permission` requests (answered back as `permission_decision`) and
// the prompt's stop reason.
//
// Lifecycle rules:
//
//   - session/cancel writes `cancel` to the process and cancels pending permission requests (they are
//     answered to the process as denials). The turn then ends with the process's `done`, resolved
//     `cancelled` whatever its status; if no `done` comes within Config.CancelGrace the turn is answered
//     `cancelled` anyway and a late `done` for it is ignored (the process should echo turnId in done).
//   - The process exiting mid-turn answers the prompt with a JSON-RPC internal error (data.error, data.exit,
//     data.stderr: its last bytes), or `cancelled` when a cancel had been requested. Later prompts on the
//     session fail the same way.
//   - Non-JSON stdout lines and lines longer than Config.MaxLineBytes are dropped and counted (logged,
//     bounded); unknown event types are ignored and counted by the translation.
//   - A process that does not take an event within Config.WriteTimeout is killed; the running prompt fails
//     with data.error saying it stopped reading its input.
//   - When ctx ends or the input reaches EOF: close every process's stdin → StopGrace → SIGTERM to its
//     group → StopGrace → SIGKILL to its group. Serve returns only when every process has been reaped and
//     every goroutine it started has ended.
//
// Updates go through acp-go-sdk's typed SessionUpdate, so values inside rawInput, rawOutput and _meta are
// re-encoded by the SDK (object keys sorted, numbers as float64). What the pure translation produced is
// otherwise sent as is.
package events
