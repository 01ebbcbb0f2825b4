// Package translate turns what an agent sent into what web clients receive, and back.
//
// It is pure: no I/O, no goroutines, no clocks it does not receive. Everything it needs lives in values the
// caller owns (a Context per session), so the same rules can be table-tested and golden-tested without an
// agent. The hot path (one agent_message_chunk) works on raw JSON bytes: the agent's payload is never decoded
// into acp-go-sdk types for forwarding, because that decoding is lossy for unknown variants and fields.
package translate
