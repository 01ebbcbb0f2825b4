// Package ws serves a session's event stream over WebSocket: `/v1/sessions/{id}/ws`.
//
// Each connection has exactly one writer goroutine and one reader goroutine, joined before the handler
// returns. The writer reads frames straight from the session's log (encoded once for all clients), so the
// agent and the log never wait for a socket; a client that falls too far behind is warned, then closed with
// 4001 and resumes from its last seq.
package ws
