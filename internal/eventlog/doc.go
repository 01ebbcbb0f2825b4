// Package eventlog is a session's append-only event log: frames with a contiguous seq, a bounded ring that
// never waits for its readers, the cursor every face reads it with, and the chain of epochs the frames were
// written under. It knows nothing of sessions, agents or the store.
package eventlog
