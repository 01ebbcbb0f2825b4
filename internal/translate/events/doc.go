// Package events translates the gateway's native event dialect into ACP.
//
// An events agent is a process that prints one JSON event per line on stdout (docs/events.md is the
// reference). This package is the pure half of supporting it: it decodes a line (DecodeEvent) and maps it
// to ACP `session/update` params, `session/request_permission` params and a turn's stop reason, following
// the translation rules of the two reference systems, Pixir's ACP.Translate (Elixir) and rlmx's
// acp-session translateEvent (TypeScript). No I/O, no goroutines, no clock: all state lives in a Context
// the caller owns, one per ACP session, whose calls the caller serialises. internal/agents/events is the
// impure half (process, pipes, the ACP connection).
//
// Mapping table:
//
//	event                              → ACP
//	text_delta                         → agent_message_chunk (answer messageId)
//	reasoning_delta                    → agent_thought_chunk
//	assistant_message                  → nothing, the unstreamed suffix, or the whole text (no-deltas fallback)
//	done.answer                        → the same dedupe against the whole turn's answer
//	iteration_output (root)            → agent_thought_chunk
//	iteration_output (open node)       → tool_call_update completed + metrics (content line and _meta)
//	tool_call                          → tool_call in_progress (title, kind, locations, rawInput)
//	tool_result                        → tool_call_update completed | failed (paired by id, else FIFO per run)
//	subagent                           → tool_call once per id per session, then tool_call_update
//	recurse                            → tool_call `recurse-<correlationId>`, "[d<depth>]" in the title
//	plan                               → plan (normalised)
//	usage                              → usage_update (only with non-negative integer used and size)
//	warning                            → session_info_update with _meta.events.warning (≤ MaxWarnings/turn)
//	permission_request                 → session/request_permission (allow_once / reject_once)
//	error (known node)                 → tool_call_update failed
//	error (root / unknown node)        → agent_message_chunk with its own messageId
//	done                               → end of turn: warning summary, stop reason
//	unknown type                       → nothing; counted in Stats
//
// One concern per file: event.go (decoding), context.go (Config, Context, turns, dispatch), text.go
// (answer, thoughts, final-answer dedupe, message ids), tool.go (tool calls, titles, kinds, locations),
// node.go (recursion nodes, subagents, errors), misc.go (plan, usage, warnings), permission.go.
//
// Bounds and redaction are translate's: every tool-call object goes through
// translate.Context.PermissionToolCall on a Context that never sees an update, which bounds content,
// rawInput, rawOutput and _meta to Config.MaxFieldBytes with a self-describing marker and redacts
// secrets in every field but ids and enums. Message and thought text is never redacted (it is the
// conversation) and never cut, only split into chunks of at most Config.MaxChunkBytes.
package events
