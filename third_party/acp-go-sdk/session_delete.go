package acp

// session/delete, stable in ACP v1 since this SDK's schema was generated (the official schema 2.4.0 has it).
// Added by hand in the generator's shape until upstream regenerates; see README.gateway.md.

// AgentMethodSessionDelete is the method of DeleteSessionRequest.
const AgentMethodSessionDelete = "session/delete"

// Capabilities for the 'session/delete' method.
//
// Supplying '{}' means the agent supports deleting sessions from 'session/list'.
type SessionDeleteCapabilities struct {
	// The _meta property is reserved by ACP to allow clients and agents to attach additional
	// metadata to their interactions.
	Meta map[string]any `json:"_meta,omitempty"`
}

// Request parameters for deleting an existing session from 'session/list'.
//
// Only available if the Agent supports the 'sessionCapabilities.delete' capability.
type DeleteSessionRequest struct {
	// The _meta property is reserved by ACP to allow clients and agents to attach additional
	// metadata to their interactions.
	Meta map[string]any `json:"_meta,omitempty"`
	// The ID of the session to delete.
	SessionId SessionId `json:"sessionId"`
}

func (v *DeleteSessionRequest) Validate() error {
	return nil
}

// Response from deleting a session.
type DeleteSessionResponse struct {
	// The _meta property is reserved by ACP to allow clients and agents to attach additional
	// metadata to their interactions.
	Meta map[string]any `json:"_meta,omitempty"`
}

func (v *DeleteSessionResponse) Validate() error {
	return nil
}
