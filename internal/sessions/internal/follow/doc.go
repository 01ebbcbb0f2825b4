// Package follow is a node's copy of a session another node owns (mode c): the Follower that feeds the
// copy from the store's log and its directory entry, and the Runner that routes what a client does on the
// copy to the owner and waits until the copy holds its effect.
//
// It is the follower role of the session core, apart from the registry: what it needs of the registry is
// Host, so the registry's own state stays its own.
package follow
