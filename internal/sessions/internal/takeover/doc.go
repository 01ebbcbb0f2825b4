// Package takeover closes the stored logs their writer left open (docs/cluster.md §4, §5): an unclean
// stop of this node's process, which its restart closes, and the sessions of a node the cluster lost, which
// one survivor takes over; a node that returns claims its sessions back. One mechanism does all three: the
// entry is claimed by compare-and-swap, the log closed with the frames the live session would have written,
// and the entry released.
//
// It is apart from the registry: what it needs of the registry is Host.
package takeover
