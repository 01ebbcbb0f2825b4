// Command opendamaged opens a --data-dir store as the gateway does at start-up (the embedded server, the
// stream and the bucket, the directory's list, every session's log) and prints what it found. Tests run it
// under a heap limit on a store whose blocks they damaged (damaged_test.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
)

func main() {
	limit := flag.Uint64("data-limit", 0, "data segment limit in bytes (RLIMIT_DATA: the heap); 0 = none")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: opendamaged [-data-limit BYTES] DIR")
		os.Exit(2)
	}
	if *limit > 0 {
		if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: *limit, Max: *limit}); err != nil {
			fmt.Fprintln(os.Stderr, "opendamaged: setrlimit:", err)
			os.Exit(2)
		}
	}
	if err := open(flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "opendamaged:", err)
		os.Exit(1)
	}
}

func open(dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nc, stop, damage, err := jsstore.Embedded(dir)
	for _, d := range damage {
		fmt.Println("damaged:", d)
	}
	if err != nil {
		return err
	}
	defer stop()
	st, err := jsstore.Open(ctx, nc, jsstore.Options{})
	if err != nil {
		return err
	}
	entries, _, err := st.Dir().List(ctx)
	var ue *store.UndecodableEntries
	if errors.As(err, &ue) {
		fmt.Println("undecodable:", ue)
		err = nil
	}
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	frames := 0
	for _, e := range entries {
		n := 0
		if _, err := st.Feed(ctx, e.ID, false, func(store.StoredFrame) error { n++; return nil }); err != nil {
			return fmt.Errorf("feed %s: %w", e.ID, err)
		}
		fmt.Printf("session %s frames %d of %d\n", e.ID, n, e.LastSeq)
		frames += n
	}
	fmt.Printf("sessions %d frames %d\n", len(entries), frames)
	return nil
}
