package jsstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A routed command or reply bigger than the connection's max payload (a prompt near --max-prompt-bytes, a
// create with many MCP servers) travels through the object store P-large, which JetStream splits into chunks:
// the request or reply itself carries only the object's name. The reader deletes the object; a TTL removes
// what a crash left behind. So every command the owner accepts locally is accepted through any node.

const (
	largeHeader = "Acpgw-Large" // the object holding the message's body
	largeTTL    = 5 * time.Minute
	// largeSlack is the payload kept free for the message's headers.
	largeSlack = 4 << 10
	// A read that finds no object is tried again after largeRetry, doubling up to largeRetryMax (1.3 s in
	// all): the object was put through another server a moment ago.
	largeRetry    = 10 * time.Millisecond
	largeRetryMax = 640 * time.Millisecond
)

// tooLarge reports whether data needs the object store on this connection.
func (c *Cluster) tooLarge(data []byte) bool {
	return int64(len(data)) > c.conn().MaxPayload()-largeSlack
}

// stash puts data in the object store and returns the message that names it.
func (c *Cluster) stash(ctx context.Context, subject string, data []byte) (*nats.Msg, error) {
	name := uuid.NewString()
	if _, err := c.large.PutBytes(ctx, name, data); err != nil {
		return nil, fmt.Errorf("jsstore: large message: %w", err)
	}
	m := nats.NewMsg(subject)
	m.Header.Set(largeHeader, name)
	return m, nil
}

// body is m's data, fetched (and deleted) from the object store when m names an object.
func (c *Cluster) body(ctx context.Context, m *nats.Msg) ([]byte, error) {
	name := m.Header.Get(largeHeader)
	if name == "" {
		return m.Data, nil
	}
	data, err := c.large.GetBytes(ctx, name)
	// The object store reads the object's description with a direct get, which a replica that has not
	// applied the put yet answers with "not found": such a replica catches up within a few round trips.
	for wait := largeRetry; errors.Is(err, jetstream.ErrObjectNotFound) && wait <= largeRetryMax; wait *= 2 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("jsstore: large message %s: %w", name, err)
		case <-t.C:
		}
		data, err = c.large.GetBytes(ctx, name)
	}
	if err != nil {
		return nil, fmt.Errorf("jsstore: large message %s: %w", name, err)
	}
	_ = c.large.Delete(ctx, name) // read once; the TTL removes it if this fails
	return data, nil
}
