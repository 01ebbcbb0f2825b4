// Package store is what the session core asks of a store and a cluster, and the records they keep: the
// Store, Persister and Directory interfaces, a session's directory entry (with its status and shares), the
// frames as stored, and the Cluster with its node beats and routed commands. internal/store/jsstore
// implements them on NATS JetStream; it imports this package, not the session core.
package store
