package acphttp

import (
	"net/http"
	"time"

	"github.com/acp-gateway/gateway/internal/frameout"
)

// stream serves a GET: the connection's SSE stream, or with Acp-Session-Id that session's. One receiver per
// stream (a second gets 409); a client that drops its stream may GET it again and gets what was queued
// meanwhile. Each message is one `data:` event with the frame's JSON; no event ids (ACP has no replay by
// Last-Event-ID: a client that lost frames re-attaches with session/load).
func (h *Server) stream(w http.ResponseWriter, r *http.Request, agent string) {
	if !AcceptsEventStream(r) {
		frameout.WriteProblem(w, http.StatusNotAcceptable, "not_acceptable", "a stream is text/event-stream: send Accept: text/event-stream")
		return
	}
	t := h.connection(w, r, agent)
	if t == nil {
		return
	}
	session := r.Header.Get(headerSessionID)
	if len(session) > maxIDLength {
		frameout.WriteProblem(w, http.StatusBadRequest, "invalid_session_id", "Acp-Session-Id is too long")
		return
	}
	s, ok, gone := t.acquire(session)
	switch {
	case gone:
		frameout.WriteProblem(w, http.StatusNotFound, "unknown_connection", "the ACP connection has ended: initialize a new one")
		return
	case !ok:
		frameout.WriteProblem(w, http.StatusConflict, "stream_taken", "this stream already has a receiver")
		return
	}
	defer t.release(session, s)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	// Frames are counted by the connection's writer; this one bounds the writes to this client (a stuck
	// write is ended by expiring the connection's write deadline: the handler cannot close it).
	out := frameout.Start(r.Context(), h.cfg.WriteTimeout, h.cfg.Face, func() { _ = rc.SetWriteDeadline(time.Unix(1, 0)) })
	defer out.Stop()
	beat := time.NewTicker(h.cfg.PingInterval)
	defer beat.Stop()
	comment := func() error {
		if _, err := w.Write([]byte(":\n\n")); err != nil {
			return err
		}
		return rc.Flush()
	}
	// A comment follows the headers at once: a proxy speaking HTTP/2 to the client (nginx) holds a response's
	// headers until its first byte, and the client waits for them before it sends what the stream would answer.
	if out.Run(comment) != nil {
		return
	}
	send := func(frames [][]byte) error {
		if len(frames) == 0 {
			return nil
		}
		return out.Run(func() error {
			for _, f := range frames {
				if _, err := w.Write(sseFrame(f)); err != nil {
					return err
				}
			}
			return rc.Flush()
		})
	}
	for {
		if send(t.take(s)) != nil {
			return
		}
		select {
		case <-s.wake:
		case <-t.ended: // the writer has stopped: what is queued is all there will be
			_ = send(t.take(s))
			return
		case <-s.over: // the session was detached (EndStream): what is queued is all there will be
			_ = send(t.take(s))
			return
		case <-t.dead:
			return
		case <-r.Context().Done():
			return
		case <-beat.C:
			if out.Run(comment) != nil {
				return
			}
		}
	}
}

// sseFrame is one SSE event carrying a JSON-RPC message (its JSON has no line breaks).
func sseFrame(frame []byte) []byte {
	b := make([]byte, 0, len(frame)+8)
	b = append(b, "data: "...)
	b = append(b, frame...)
	return append(b, '\n', '\n')
}
