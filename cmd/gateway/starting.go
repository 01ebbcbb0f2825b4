package main

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
)

// frontHandler is the HTTP server's handler: until the gateway is ready (in mode c, until it has joined its
// NATS cluster) it answers /healthz 200 and everything else 503 store_unavailable, so a supervisor sees
// it alive and a load balancer sends clients elsewhere; then it hands every request to the API.
type frontHandler struct {
	version string
	api     atomic.Pointer[http.Handler] // nil until ready
}

func (f *frontHandler) ready(h http.Handler) { f.api.Store(&h) }

func (f *frontHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := f.api.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	if r.URL.Path == "/healthz" {
		writeStartJSON(w, http.StatusOK, "application/json", map[string]any{"status": "ok", "version": f.version})
		return
	}
	// The detail stays generic: /readyz needs no credentials, and the error names servers and streams.
	w.Header().Set("Retry-After", "5")
	writeStartJSON(w, http.StatusServiceUnavailable, "application/problem+json", map[string]any{
		"type": "/problems/store_unavailable", "title": http.StatusText(http.StatusServiceUnavailable),
		"status": http.StatusServiceUnavailable, "code": "store_unavailable", "retryAfter": 5,
		"detail": "the gateway is starting: it waits for its NATS cluster (its log says why)",
	})
}

func writeStartJSON(w http.ResponseWriter, status int, contentType string, body any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body) // the client went away: nothing to tell it
}
