// Package services holds what the gateway serves one session's agent as its ACP client: fs/* and terminal/*
// requests, served by a delegate client or by the gateway itself, and the listing of the session's files. It
// holds no session state: what it needs of the session comes through Session.
package services
