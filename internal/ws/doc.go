// Package ws serves a session's event stream over WebSocket: `/v1/sessions/{id}/ws`.
//
// Each connection has exactly one writer goroutine and one reader goroutine, joined before the handler
// returns. The writer reads frames straight from the session's log (encoded once for all clients) through
// Session.Follow, so the agent and the log never wait for a socket; a client that falls too far behind is
// warned, then closed with 4001 and resumes from its last seq. Frames go out through the frame writer every
// streaming face shares (frameout), whose watchdog drops a client that stops reading. The socket is a
// frameout.HeldConn: frames written while the writer is behind the log leave in one write(2), flushed
// whenever the writer has caught up (Wait) and before the close.
package ws
