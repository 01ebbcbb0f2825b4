package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// dataFormat is the layout of a data dir this gateway reads and writes (DIR/format). Raise it when a change
// would make an older gateway misread the store; an older gateway then refuses the dir instead of damaging it.
// Format 1 is the embedded JetStream store in DIR/jetstream with DIR/node-id and DIR/lock.
const dataFormat = 1

// checkDataFormat reads DIR/format, refusing a format this gateway does not know, and writes it on the first
// start. A dir without the file is format 1: gateways before the file existed wrote that layout.
func checkDataFormat(dir string, logger *slog.Logger) error {
	path := filepath.Join(dir, "format")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if _, statErr := os.Stat(filepath.Join(dir, "node-id")); statErr == nil {
			logger.Info("--data-dir has no format file: written by an older gateway in format 1; marking it", "dataDir", dir)
		}
		if err := os.WriteFile(path, []byte(strconv.Itoa(dataFormat)+"\n"), 0o600); err != nil {
			return fmt.Errorf("--data-dir: %v", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("--data-dir: %v", err)
	}
	text := strings.TrimSpace(string(b))
	n, err := strconv.Atoi(text)
	switch {
	case err != nil || n < 1:
		return fmt.Errorf("--data-dir %s: the format file holds %q, not a data format number; this gateway writes %d there (if the file was damaged, restore the data dir from a backup)", dir, text, dataFormat)
	case n > dataFormat:
		return fmt.Errorf("--data-dir %s holds data format %d, written by a newer gateway; this gateway (version %s) reads format %d: run the newer gateway on it, or stop and restore a backup taken before the upgrade (docs/deploy.md, \"Back up and restore a data dir\")", dir, n, version, dataFormat)
	}
	return nil
}
