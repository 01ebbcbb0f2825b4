// Package durable is a session's link to the store in the store modes (docs/cluster.md §4): the
// write-behind of its log, the one goroutine that keeps its directory entry current, the load of a stored
// log on first use, and the frames that close a stored log left open.
//
// It is the store role of a session this node runs, apart from the registry: what it needs of the
// registry is Host. Memory mode has no link and pays nothing.
package durable
