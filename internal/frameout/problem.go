package frameout

import (
	"encoding/json"
	"net/http"
)

// WriteProblem refuses an upgrade (or a stream) before it starts, in the API's error format
// (application/problem+json) with a stable code.
func WriteProblem(w http.ResponseWriter, status int, code, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "/problems/" + code, "title": http.StatusText(status), "status": status, "code": code, "detail": detail})
}
