// Package jsstore is the durable session store on NATS JetStream (docs/cluster.md): one stream of session logs
// (a subject per session), a KV bucket for the session directory, and the write-behind that copies each owned
// session's ring Log into the stream without ever blocking an append.
//
// The live path never waits for it: a persister is one more reader of the ring, and frames it has not yet
// stored stay pinned in the ring (Log.Pin) up to a byte bound. Readers rebuild a session's frames with one
// rule (storedlog.Folder), which tolerates the duplicates, late fills, forks and gaps the writers can leave;
// how a frame is stored as messages is in storedlog too.
package jsstore
