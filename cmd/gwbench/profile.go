package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"time"
)

// runProfile floods the gateway (k clients of one face per session) in a loop while taking a CPU profile (or, with
// -profile-kind, the allocations or an execution trace) of it through --debug-addr, writes it to o.profile and prints
// `go tool pprof -top`. -profile-rate paces the floods; -profile-hog runs one CPU hog per core beside them.
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
			prompt := fmt.Sprintf("flood %d %d", o.n, o.size)
			if o.profileRate > 0 {
				prompt += fmt.Sprintf(" rate=%g", o.profileRate)
			}
			f, err := runFace(pctx, g, face(o.profileFace), o.profileK, prompt, o.n, o.size)
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
	if o.profileHog {
		stopHogs, err := startHogs(runtime.NumCPU())
		if err != nil {
			return err
		}
		defer stopHogs()
	}
	time.Sleep(500 * time.Millisecond)
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/%s?seconds=%d", g.debugAddr, o.profileKind, o.profileSec))
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
	fmt.Printf("profiled %ds: %d floods of %d × %d B with %d %s client(s), %d updates per client, %d errors\n\n", o.profileSec, floods.Load(), o.n, o.size, o.profileK, o.profileFace, updates.Load(), errs.Load())
	if o.profileKind == "trace" {
		fmt.Printf("execution trace written to %s: go tool trace -pprof=sched %s > sched.pprof (where goroutines waited to run)\n", o.profile, o.profile)
		return nil
	}
	top := []string{"tool", "pprof", "-top", "-nodecount=40"}
	if o.profileKind == "allocs" {
		top = append(top, "-sample_index=alloc_space")
	}
	cmd := exec.Command("go", append(top, o.gatewayBin, o.profile)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}
