package frameout

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// WriteProblem refuses an upgrade (or a stream) before it starts, in the API's error format
// (application/problem+json) with a stable code.
func WriteProblem(w http.ResponseWriter, status int, code, detail string) {
	WriteRetryProblem(w, status, code, detail, 0)
}

// WriteRetryProblem is WriteProblem for a refusal the client may retry after retryAfter seconds: the wait is
// both the Retry-After header and the body's `retryAfter`, as on every other problem of the API.
func WriteRetryProblem(w http.ResponseWriter, status int, code, detail string, retryAfter int) {
	body := map[string]any{"type": "/problems/" + code, "title": http.StatusText(status), "status": status, "code": code, "detail": detail}
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		body["retryAfter"] = retryAfter
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
