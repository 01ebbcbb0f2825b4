// Package translate turns what an agent sent into what web clients receive, and back.
//
// It is pure: no I/O, no goroutines, no clocks it does not receive. Everything it needs lives in values the
// caller owns (a Context per session, whose calls the session serialises), so the same rules can be
// table-tested and golden-tested without an agent. The hot path (one agent_message_chunk) works on raw JSON
// bytes: the agent's payload is never decoded into acp-go-sdk types for forwarding, because that decoding is
// lossy for unknown variants and fields.
//
// Raw bytes from outside (agent params, prompt blocks, the params of the frames it builds) pass
// rawjson.ValidUTF8 on the way in: the log and the snapshot never hold invalid UTF-8, which browsers must
// reject on a WebSocket.
//
// The byte-level work (scanning objects, bounds, redaction, UTF-8) lives in the rawjson subpackage, the
// questions put to users (permission requests, elicitations) and their answers in ask. One concern per file:
//
//	frame.go      JSON-RPC frames with `_meta.gateway` stamped; session-id rewriting
//	context.go    Config, Context, turns (BeginTurn/EndTurn)
//	update.go     agent `session/update` → client params (Context.Update)
//	msgid.go      the messageId policy for id-less chunks
//	toolcall.go   merged tool-call state, open-call closers, permission tool-call merge
//	terminalmeta.go  `_meta.terminal_output` data accumulated in the merged tool-call state
//	prompt.go     the user's prompt as user_message_chunks
//	note.go       gateway notifications the snapshot learns turn outcomes from
//	snapshot.go   the folded, bounded snapshot document
//	replay.go     `session/load` replay policy
//	stopreason.go stop-reason resolution, cancel race
//
// Dedupe: ACP has no "final text" event, so on the ACP path every chunk is forwarded as sent (two identical
// chunks are legitimate text). Deduplicating a streamed answer against a final one belongs to the native
// event dialect's mapping.
package translate
