// Package demo is the gateway's built-in "demo" agent: a real ACP agent that
// runs in-process and speaks JSON-RPC over a pair of streams, exactly like an
// external agent process would over stdio. It needs no model, no network and
// no credentials, so the gateway (and its tests and its web UI) always has an
// agent that exercises every common part of the protocol deterministically.
//
// The agent never touches the disk: file contents, diffs and paths it reports
// are made up (paths are joined onto the session's cwd).
//
// # Sessions
//
// session/new returns a session id "demo_<hex>", two modes ("default",
// "plan") and one select config option "style" (plain, fancy). Right after
// the session/new response is on the wire it sends an
// available_commands_update ("help", "echo"). session/set_mode and
// session/set_config_option send their current_mode_update /
// config_option_update before replying, so a client using acp-go-sdk has
// seen the update when its call returns. Modes and style are state only;
// they do not change what a turn does. The agent advertises loadSession and
// accepts session/load as a no-op: it replays nothing (it keeps no history)
// and answers the modes and config options of the session, which it creates
// afresh when it does not know the id (a restarted agent).
//
// # Prompt conventions
//
// The prompt's text is the concatenation of its text blocks, joined with
// "\n" (other block kinds are ignored). With the text trimmed:
//
//   - "quick": a short turn: agent_thought_chunk, the echo
//     (agent_message_chunk "You said: " then the text in up to 3 chunks),
//     stopReason end_turn. No plan, tool calls or permission request.
//   - "/help": one agent_message_chunk describing these conventions, end_turn.
//   - "/echo <text>": one agent_message_chunk "<text>", end_turn.
//   - "/ask": an elicitation/create (form: a required "name", a "colour"
//     enum with default "green"), then one agent_message_chunk saying what
//     came back ("You answered: colour=red, name=Ann", "You declined.",
//     "You cancelled." or "No answer: <error>"), end_turn.
//   - anything else: the full turn below.
//
// A full turn (N is the session's turn number, from 1; Options.Delay is
// paused before every update after the first and before the permission
// request):
//
//	agent_thought_chunk   "Thinking about: <first 60 chars of the text>"
//	agent_message_chunk   "You said: "
//	agent_message_chunk   × 1..3: the text, split at word boundaries
//	plan                  [in_progress, pending, pending]
//	tool_call             read_N  "Read README.md" kind read, pending
//	tool_call_update      read_N  in_progress
//	tool_call_update      read_N  completed, made-up file content
//	plan                  [completed, in_progress, pending]
//	tool_call             edit_N  "Edit notes.md" kind edit, pending, diff
//	session/request_permission  allow-once / allow-always / reject-once
//	tool_call_update      edit_N  completed {applied:true} or failed {applied:false, reason}
//	plan                  [completed, completed, in_progress]
//	usage_update          used = previous used + 1000 + len(text), size 200000, cost 0 USD
//	session_info_update   "Demo: <first 40 chars of the session's first prompt>" (first full turn only)
//	agent_message_chunk   the closing markdown (differs when the edit was not applied)
//	plan                  [completed, completed, completed]
//	→ stopReason end_turn, usage {inputTokens: 1000 + len(text), outputTokens: 100, totalTokens: their sum}
//
// The concatenated agent_message_chunk text of a turn is therefore
// "You said: " + text + closing, with closing one of [ClosingApplied] or
// [ClosingNotApplied]. Whitespace in the text is collapsed to single spaces
// in the thought and the title, and kept verbatim in the echo.
//
// The edit is allowed only when the client selects an offered option of kind
// allow_once or allow_always (allow-always is not remembered: every turn asks,
// which keeps turns identical). A reject, an unknown option id or a failed
// request marks the edit failed and the turn goes on.
//
// # Cancellation
//
// session/cancel stops the running turn at the next step, or at once while it
// is pausing or waiting for the permission answer (the request's context is
// cancelled, so acp-go-sdk sends $/cancel_request). A "cancelled" permission
// outcome means the same thing (ACP: "the prompt turn was cancelled before
// the user responded"), so the turn ends even if that answer overtakes the
// session/cancel notification. A cancelled turn sends no further updates and
// answers stopReason "cancelled"; closing the open tool call is left to the
// client. A second session/prompt while a turn runs is refused with
// -32600 (data.error "a turn is already running") and does not disturb the
// running turn.
package demo
