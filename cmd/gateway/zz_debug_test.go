package main

import (
	"os"
	"runtime/pprof"
	"testing"
	"time"
)

func debugStop(t *testing.T, g *gateway) {
	done := make(chan struct{})
	go func() { g.stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		<-done
	}
}

func dumpAfter(d time.Duration) {
	time.Sleep(d)
	pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
}
