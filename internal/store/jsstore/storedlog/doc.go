// Package storedlog is how a session's log is kept as messages of its stream subject and read back: a frame
// as one message or as parts, a gap marker, their msg-ids (docs/cluster.md §2), and the Folder that applies
// the reader rule (docs/cluster-design.md) to what writers left: duplicates, late fills, forks and gaps.
//
// It is apart from jsstore because it needs no connection: the format and the rule are pure code, tested and
// fuzzed on their own; jsstore's writers and readers are its only callers.
package storedlog
