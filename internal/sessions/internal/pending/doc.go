// Package pending holds a session's requests that wait for a user (permission requests and elicitations):
// the table of those pending and the ids lately resolved, how a client's answer or the gateway's own decides
// each, the session's permission policy, and the views and resent frames clients get of them. The session
// logs the frames and guards the table with its own lock; this package holds no lock and logs nothing.
package pending
