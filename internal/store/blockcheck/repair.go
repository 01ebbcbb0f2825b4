package blockcheck

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Damage is a block of the embedded store that failed its check at start-up (check.go). It was cut at
// its first bad record, after a copy of it as it was was saved; what followed that record is lost.
type Damage struct {
	Stream  string // the stream: the session logs (<prefix>-log) or the session directory (KV_<prefix>-sessions)
	Block   string // the block file
	Offset  int64  // where the first bad record starts: the bytes before it are kept
	Lost    int64  // bytes cut off
	Kept    int    // records kept
	LastSeq uint64 // the stream sequence of the last record kept (0: none)
	Reason  string // what is wrong with the first bad record
	SavedTo string // the copy of the block as it was
}

func (d Damage) String() string {
	return fmt.Sprintf("stream %s: block %s: %s at byte %d: kept %d records (to stream sequence %d), cut %d bytes; the block as it was is saved in %s",
		d.Stream, filepath.Base(d.Block), d.Reason, d.Offset, d.Kept, d.LastSeq, d.Lost, d.SavedTo)
}

// Repair checks every block of every stream under dir/jetstream (dir is the server's StoreDir) before the
// server opens them. A damaged block is copied to dir/damaged/<time>/ and cut at its first bad record, and its
// stream's state file (msgs/index.db) is removed so the server rebuilds the stream's state from the blocks as
// they now are. It returns what it cut; an error is a check or a repair that could not be done.
func Repair(dir string) ([]Damage, error) {
	streamDirs, err := filepath.Glob(filepath.Join(dir, "jetstream", "*", "streams", "*"))
	if err != nil {
		return nil, err
	}
	var out []Damage
	saveRoot := filepath.Join(dir, "damaged", time.Now().UTC().Format("20060102T150405.000Z"))
	for _, sd := range streamDirs {
		if !plainStream(sd) {
			continue
		}
		blocks, err := streamBlocks(sd)
		if err != nil {
			return out, fmt.Errorf("jsstore: check the store: %w", err)
		}
		damaged := false
		for _, index := range blocks {
			path := filepath.Join(sd, "msgs", fmt.Sprintf("%d.blk", index))
			c, err := checkBlock(path, filepath.Base(sd), index)
			if err != nil {
				return out, fmt.Errorf("jsstore: check the store: %w", err)
			}
			if c.bad == "" {
				continue
			}
			rel, _ := filepath.Rel(dir, path)
			saved := filepath.Join(saveRoot, rel)
			size, err := saveAndCut(path, saved, c.good)
			if err != nil {
				return out, fmt.Errorf("jsstore: repair %s: %w", path, err)
			}
			damaged = true
			out = append(out, Damage{Stream: filepath.Base(sd), Block: path, Offset: c.good, Lost: size - c.good,
				Kept: c.records, LastSeq: c.lastSeq, Reason: c.bad, SavedTo: saved})
		}
		if damaged {
			if err := os.Remove(filepath.Join(sd, "msgs", "index.db")); err != nil && !errors.Is(err, os.ErrNotExist) {
				return out, fmt.Errorf("jsstore: repair %s: %w", sd, err)
			}
		}
	}
	return out, nil
}

// saveAndCut copies the block at path to saved, then truncates it to keep bytes. It returns the block's size.
func saveAndCut(path, saved string, keep int64) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(saved), 0o700); err != nil {
		return 0, err
	}
	src, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	dst, err := os.OpenFile(saved, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	size, err := io.Copy(dst, src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	if err := src.Truncate(keep); err != nil {
		return 0, err
	}
	return size, src.Sync()
}
