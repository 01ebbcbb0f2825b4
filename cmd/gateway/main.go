// Command gateway serves ACP agents to web clients over REST, WebSocket and SSE.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "hash-token" {
		if err := hashToken(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "gateway:", err)
			os.Exit(1)
		}
		return
	}
	if n := relayProcs(os.Getenv, runtime.GOMAXPROCS(0), runtime.NumCPU()); n > 0 {
		runtime.GOMAXPROCS(n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if code := exitCode(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr), os.Stderr); code != 0 {
		os.Exit(code)
	}
}

// exitCode prints the error run stopped with and returns the process's exit code: 2 for a configuration it
// refused (with a hint at --help), 1 for any other failure.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.As(err, new(configError)):
		fmt.Fprintf(stderr, "gateway: %v\n%s\n", err, usageHint)
		return 2
	}
	fmt.Fprintln(stderr, "gateway:", err)
	return 1
}
