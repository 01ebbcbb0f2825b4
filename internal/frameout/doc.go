// Package frameout is the write side shared by every streaming face (`/v1/sessions/{id}/ws`, `/acp`, SSE):
// one frame writer per connection with a write watchdog, write batching (frames ready together leave in
// one write(2): HeldConn, Writer.Batch) and per-face metrics, the close a WebSocket ends
// with, and the JSON-RPC frames the gateway builds itself (errors, results, notifications).
//
// It exists so that the faces cannot drift apart: a client that stops reading is dropped the same way
// everywhere, writes cost the same everywhere, and every face is counted. Which frames a face sends, and
// when, is the face's business; where they come from is the session's log cursor (eventlog.Cursor).
package frameout
