package acpws

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// benchChunk is a flood agent's chunk as acp-go-sdk marshals it (256 B of text, `_meta` on the update): the
// update every gwbench flood row sends.
var benchChunk = []byte(`{"sessionId":"sess_0123456789abcdef","update":{"_meta":{"flood":{"i":4242,"sentNs":1767225600123456789}},"content":{"text":"` +
	strings.Repeat("x", 256) + `","type":"text"},"sessionUpdate":"agent_message_chunk"}}`)

// benchMarker is in benchChunk's frame only.
var benchMarker = []byte(`"flood":{"i":4242,`)

// fanOutRound is how many updates are appended before the benchmark waits for every client to have them
// all: the writers find frames ready together, as in a flood, and no client falls behind its queue limit.
const fanOutRound = 128

// BenchmarkFanOut measures one agent update's way to k clients of one face on one session, on real
// WebSockets over loopback: the session's translate and log append, each client's writer (frame choice,
// the batched write) and the clients' reads, which run in this process too. ns/frame-client (wall time),
// cpu-ns/frame-client (the process's CPU time: what survives a loaded machine) and allocs/frame-client
// divide by the frames delivered (updates × k).
func BenchmarkFanOut(b *testing.B) {
	for _, bc := range []struct {
		face string
		k    int
	}{{"acp", 1}, {"acp", 10}, {"ws", 10}} {
		b.Run(fmt.Sprintf("%s/x%d", bc.face, bc.k), func(b *testing.B) { benchFanOut(b, bc.face, bc.k) })
	}
}

func benchFanOut(b *testing.B, face string, k int) {
	e := newEnv(b, Options{})
	first := e.dial("/acp")
	first.initialize()
	sid := first.newSession(e.dir)
	s, err := e.reg.Get(sid)
	if err != nil {
		b.Fatal(err)
	}
	conns := make([]*websocket.Conn, 0, k)
	switch face {
	case "acp":
		conns = append(conns, first.c)
		for range k - 1 {
			cl := e.dial("/acp")
			cl.initialize()
			cl.mustResult("session/resume", map[string]any{"sessionId": sid, "cwd": e.dir, "mcpServers": []any{}}, nil)
			conns = append(conns, cl.c)
		}
	case "ws":
		for range k {
			cl := e.dialObserver("/v1/sessions/" + sid + "/ws")
			for m := cl.next(); m.Method != "_gateway/replay_complete"; m = cl.next() {
			}
			conns = append(conns, cl.c)
		}
		first.c.CloseNow() // it made the session; an /acp socket nobody reads must not cost the /ws rows
	}

	// Each reader counts the bench's messages it reads and signals when its count reaches target, which is set
	// before the round's updates are appended.
	var target atomic.Int64
	reached := make(chan struct{}, k)
	ctx, cancel := context.WithCancel(context.Background())
	readers := make(chan error, k)
	for _, c := range conns {
		go func() {
			var buf bytes.Buffer
			var n int64
			for {
				_, r, err := c.Reader(ctx)
				if err == nil {
					buf.Reset()
					_, err = buf.ReadFrom(r)
				}
				if err != nil {
					readers <- err
					return
				}
				if !bytes.Contains(buf.Bytes(), benchMarker) {
					continue // the demo agent's own updates (available commands)
				}
				if n++; n == target.Load() {
					reached <- struct{}{}
				}
			}
		}()
	}
	defer func() {
		cancel()
		for range k {
			<-readers
		}
	}()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := processCPU(b)
	b.ResetTimer()
	for sent := 0; sent < b.N; {
		round := min(fanOutRound, b.N-sent)
		sent += round
		target.Store(int64(sent))
		for range round {
			s.SessionUpdate(benchChunk)
		}
		for range k {
			select {
			case <-reached:
			case err := <-readers:
				b.Fatalf("a client stopped reading: %v", err)
			}
		}
	}
	b.StopTimer()
	cpu := processCPU(b) - cpu0
	runtime.ReadMemStats(&after)
	frames := float64(b.N) * float64(k)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/frames, "ns/frame-client")
	b.ReportMetric(float64(cpu.Nanoseconds())/frames, "cpu-ns/frame-client")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/frames, "allocs/frame-client")
}

// processCPU is the CPU time this process has used (user + system).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
