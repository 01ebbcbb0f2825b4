package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/google/uuid"

	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/blockcheck"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
)

// Mode b (docs/cluster.md §4): --data-dir runs an embedded JetStream server on DIR/jetstream, in process and
// without a listener. The directory holds the transcripts and the client MCP servers' env and headers, so it
// is created 0700; a lock file keeps a second gateway off it.

var natsPrefixPattern = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// checkStore checks the store flags.
func (c *config) checkStore() error {
	if !natsPrefixPattern.MatchString(c.natsPrefix) {
		return fmt.Errorf("--nats-prefix %q: want %s", c.natsPrefix, natsPrefixPattern)
	}
	if c.storeInflight < 1 {
		return fmt.Errorf("--store-inflight must be at least 1, got %d", c.storeInflight)
	}
	if c.storeMaxLag < 1 {
		return fmt.Errorf("--store-max-lag must be at least 1, got %d", c.storeMaxLag)
	}
	if c.retention < 0 {
		return fmt.Errorf("--retention must not be negative, got %s", c.retention)
	}
	if c.dataDir != "" {
		abs, err := filepath.Abs(c.dataDir)
		if err != nil {
			return fmt.Errorf("--data-dir: %v", err)
		}
		c.dataDir = abs
	}
	return nil
}

// dataStore is mode b's open store.
type dataStore struct {
	store  store.Store
	nodeID string
	close  func() // closes the connection, stops the server, releases the lock
	up     func() bool
}

// openDataDir locks DIR, reads (or creates once) DIR/node-id and opens the store on the embedded server.
func (c *config) openDataDir(ctx context.Context, logger *slog.Logger) (*dataStore, error) {
	dir := c.dataDir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, dataDirPermError(dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, dataDirPermError(dir, err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	if err := checkDataFormat(dir, logger); err != nil {
		unlock()
		return nil, err
	}
	nodeID, err := readNodeID(dir)
	if err != nil {
		unlock()
		return nil, err
	}
	nc, stop, damage, err := jsstore.Embedded(dir)
	reportDamage(logger, damage)
	if err != nil {
		unlock()
		return nil, fmt.Errorf("--data-dir: %v", err)
	}
	st, err := jsstore.Open(ctx, nc, jsstore.Options{
		Prefix: c.natsPrefix, LogMaxFrames: c.logMaxFrames, LogMaxBytes: c.logMaxBytes,
		Inflight: c.storeInflight, MaxLag: c.storeMaxLag,
	})
	if err != nil {
		stop()
		unlock()
		return nil, fmt.Errorf("--data-dir: %v", err)
	}
	logger.Info("durable sessions", "dataDir", dir, "node", nodeID, "prefix", c.natsPrefix)
	return &dataStore{store: st, nodeID: nodeID, close: func() { stop(); unlock() }, up: nc.IsConnected}, nil
}

// lockDir takes DIR/lock (flock, released when the process ends however it ends), or says who has it.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--data-dir: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("--data-dir %s is in use by another gateway (its lock file is held)", dir)
		}
		return nil, fmt.Errorf("--data-dir: lock: %v", err)
	}
	return func() { f.Close() }, nil
}

// readNodeID returns the node id kept in DIR/node-id, creating it on the first start.
func readNodeID(dir string) (string, error) {
	path := filepath.Join(dir, "node-id")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		id := uuid.NewString()
		if err := os.WriteFile(path, []byte(id+"\n"), 0o600); err != nil {
			return "", fmt.Errorf("--data-dir: %v", err)
		}
		return id, nil
	}
	if err != nil {
		return "", fmt.Errorf("--data-dir: %v", err)
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return "", fmt.Errorf("--data-dir: %s is empty", path)
	}
	return id, nil
}

// reportDamage tells the operator which damaged blocks the start-up cut (blockcheck.Repair): what each kept
// and lost, and where the block as it was is saved. Sessions whose directory entries were cut are not listed
// any more; sessions whose frames were cut come back with the frames before the damage.
func reportDamage(logger *slog.Logger, damage []blockcheck.Damage) {
	for _, d := range damage {
		what := "session logs: frames after the cut are lost"
		if strings.HasPrefix(d.Stream, "KV_") {
			what = "session directory: sessions whose entries were cut are no longer listed"
		}
		logger.Error("--data-dir: a damaged store block was cut at its first bad record", "stream", d.Stream, "holds", what,
			"block", d.Block, "reason", d.Reason, "offset", d.Offset, "keptRecords", d.Kept, "keptToSeq", d.LastSeq,
			"lostBytes", d.Lost, "savedTo", d.SavedTo)
	}
}
