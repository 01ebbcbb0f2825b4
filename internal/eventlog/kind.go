package eventlog

import "strconv"

// Kind is what a logged frame is. The session sets it when it appends the frame (it knows what it logs),
// so readers that route frames, such as the `/acp` writer, never decode one to find out.
type Kind uint8

const (
	// KindUnknown is a frame nobody classified (a stored frame that could not be read back): readers decode it.
	KindUnknown Kind = iota
	// KindUpdate is a session/update that every client gets as it is: any update but a user_message_chunk.
	KindUpdate
	// KindUserChunk is a session/update user_message_chunk: the client that sent the prompt is not sent it.
	KindUserChunk
	// KindPermissionRequest is a session/request_permission request to clients.
	KindPermissionRequest
	// KindGateway is a `_gateway/*` notification.
	KindGateway
	// KindElicitationRequest is an elicitation/create request to clients.
	KindElicitationRequest
	// KindElicitationComplete is an elicitation/complete notification.
	KindElicitationComplete
)

var kindNames = [...]string{"unknown", "update", "user_chunk", "permission_request", "gateway", "elicitation_request", "elicitation_complete"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}
