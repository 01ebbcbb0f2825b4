// Package ask holds the questions an agent puts to a user through the gateway (a permission request, an
// elicitation) and maps a user's answer, or the gateway's own default-deny, to the agent's reply. It is apart
// from translate because it needs none of a session's translation state, and the faces and the session core
// share its answer types.
package ask
