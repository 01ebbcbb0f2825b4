// Command gateway serves ACP agents to web clients over REST, WebSocket and SSE.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "hash-token" {
		if err := hashToken(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "gateway:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) >= 2 && os.Args[1] == "healthcheck" {
		if err := healthcheck(context.Background(), os.Args[2:], os.Getenv, os.Stderr); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return
			}
			fmt.Fprintln(os.Stderr, "gateway:", err)
			os.Exit(1)
		}
		return
	}
	if n := relayProcs(os.Getenv, runtime.GOMAXPROCS(0), runtime.NumCPU()); n > 0 {
		runtime.GOMAXPROCS(n)
	}
	ctx, stop := processContext()
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		os.Exit(exitCode(err, os.Stderr))
	}
}
