package fold

import (
	"strings"

	"github.com/acp-gateway/gateway/internal/eventlog"
)

// Kind is the log kind of a frame with method; update is a session/update's sessionUpdate.
func Kind(method, update string) eventlog.Kind {
	switch {
	case method == "session/update" && update == "user_message_chunk":
		return eventlog.KindUserChunk
	case method == "session/update":
		return eventlog.KindUpdate
	case method == "session/request_permission":
		return eventlog.KindPermissionRequest
	case method == "elicitation/create":
		return eventlog.KindElicitationRequest
	case method == "elicitation/complete":
		return eventlog.KindElicitationComplete
	case strings.HasPrefix(method, "_gateway/"):
		return eventlog.KindGateway
	}
	return eventlog.KindUnknown
}
