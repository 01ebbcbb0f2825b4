package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync/atomic"
	"time"
)

// runProfile floods the gateway (k clients per session) in a loop while taking a CPU profile of it through
// --debug-addr, writes the profile to o.profile and prints `go tool pprof -top`.
func runProfile(ctx context.Context, o options, tmp string, extra []string) error {
	g, err := startGateway(o.gatewayBin, tmp, "gateway-profile", true, extra...)
	if err != nil {
		return err
	}
	defer g.stop()
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	var floods, updates, errs atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for pctx.Err() == nil {
			f, err := runGateway(pctx, g, o.profileK, fmt.Sprintf("flood %d %d", o.n, o.size), o.n, o.size)
			if pctx.Err() != nil {
				return // the flood cut short by the end of the profile is not counted
			}
			if err != nil {
				if pctx.Err() == nil {
					warnf("profile flood: %v", err)
				}
				return
			}
			floods.Add(1)
			updates.Add(int64(f.Updates))
			errs.Add(int64(f.Errors))
		}
	}()
	time.Sleep(500 * time.Millisecond)
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", g.debugAddr, o.profileSec))
	if err != nil {
		return err
	}
	f, err := os.Create(o.profile)
	if err != nil {
		resp.Body.Close()
		return err
	}
	_, err = io.Copy(f, resp.Body)
	resp.Body.Close()
	f.Close()
	stop()
	<-done
	if err != nil {
		return err
	}
	fmt.Printf("profiled %ds: %d floods of %d × %d B with %d client(s), %d updates per client, %d errors\n\n", o.profileSec, floods.Load(), o.n, o.size, o.profileK, updates.Load(), errs.Load())
	cmd := exec.Command("go", "tool", "pprof", "-top", "-nodecount=40", o.gatewayBin, o.profile)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}
