package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestDeliveryChaosSSE is the chaos test for Server-Sent Events: 20 EventSource-like clients cut their stream
// after a random number of events and reconnect with Last-Event-ID set to the last id they saw. Each must end
// up with the session's log exactly, byte for byte.
func TestDeliveryChaosSSE(t *testing.T) {
	t.Parallel()
	const (
		nSessions = 2
		nClients  = 20
		nTurns    = 15
		seed      = 7
	)
	start := time.Now()
	g := startGateway(t)
	type sess struct{ id, epoch string }
	ss := make([]sess, nSessions)
	for i := range ss {
		s := g.createSession(map[string]any{"permissionPolicy": "approve-all"})
		ss[i] = sess{s.ID, s.Epoch}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	targetsKnown, markKnown := context.WithCancel(context.Background())
	defer markKnown()
	targets := make([]uint64, nSessions)
	var reconnects atomic.Int64
	type result struct {
		session int
		got     []logEntry
		err     error
	}
	results := make([]result, nClients)
	var wg sync.WaitGroup
	for i := range nClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			si := i % nSessions
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			got, err := sseChaosClient(ctx, g, ss[si].id, rng, targetsKnown, func() uint64 { return targets[si] }, &reconnects)
			results[i] = result{si, got, err}
		}()
	}
	for si := range ss {
		for n := range nTurns {
			text := "sse chaos " + strconv.Itoa(n)
			if n%2 == 1 {
				text = "quick"
			}
			if code := g.do("POST", "/v1/sessions/"+ss[si].id+"/prompt?wait=true", map[string]string{"text": text}, nil); code != http.StatusOK {
				t.Fatalf("turn: %d", code)
			}
		}
	}
	for si := range ss {
		var v sessionJSON
		g.do("GET", "/v1/sessions/"+ss[si].id, nil, &v)
		targets[si] = v.LastSeq
	}
	markKnown()
	wg.Wait()
	fulls := make([][]logEntry, nSessions)
	for si := range ss {
		fulls[si] = g.fullLogWS(t, ss[si].id, ss[si].epoch)
	}
	for i, r := range results {
		if r.err != nil {
			t.Errorf("client %d: %v", i, r.err)
			continue
		}
		full := fulls[r.session]
		if uint64(len(r.got)) < targets[r.session] || len(r.got) > len(full) {
			t.Errorf("client %d: %d frames, target %d, log %d", i, len(r.got), targets[r.session], len(full))
			continue
		}
		for k := range r.got {
			if !bytes.Equal(r.got[k].Raw, full[k].Raw) {
				t.Errorf("client %d: frame %d differs", i, k+1)
				break
			}
		}
	}
	t.Logf("%d SSE clients, %d sessions x %d turns (%v frames): %d reconnects, %s", nClients, nSessions, nTurns, targets, reconnects.Load(), time.Since(start).Round(time.Millisecond))
}

func sseChaosClient(ctx context.Context, g *gateway, id string, rng *rand.Rand, targetsKnown context.Context, target func() uint64, reconnects *atomic.Int64) ([]logEntry, error) {
	var got []logEntry
	last := uint64(0)
	for attempt := 0; ; attempt++ {
		known := targetsKnown.Err() != nil
		if known && last >= target() {
			return got, nil
		}
		if attempt > 1000 || ctx.Err() != nil {
			return got, fmt.Errorf("gave up at seq %d after %d connections", last, attempt)
		}
		cctx, cancel := context.WithCancel(ctx)
		stop := func() bool { return false }
		if !known {
			stop = context.AfterFunc(targetsKnown, cancel)
		}
		req, _ := http.NewRequestWithContext(cctx, "GET", g.base+"/v1/sessions/"+id+"/events", nil)
		req.Header.Set("Accept", "text/event-stream")
		if attempt > 0 {
			req.Header.Set("Last-Event-ID", strconv.FormatUint(last, 10))
			reconnects.Add(1)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			stop()
			cancel()
			if ctx.Err() == nil {
				continue
			}
			return got, err
		}
		budget := 1 + rng.IntN(25)
		br := bufio.NewReader(resp.Body)
		var evID string
		var data []byte
		n := 0
		var ferr error
	read:
		for n < budget && !(known && last >= target()) {
			line, err := br.ReadBytes('\n')
			if err != nil {
				break // cut by the wake-up, or the server: reconnect
			}
			line = bytes.TrimSuffix(line, []byte("\n"))
			switch {
			case len(line) == 0:
				if data != nil {
					n++
					if evID != "" {
						seq, _ := strconv.ParseUint(evID, 10, 64)
						if seq != last+1 {
							ferr = fmt.Errorf("id %d after %d", seq, last)
							break read
						}
						got = append(got, logEntry{seq, data})
						last = seq
					} else if f, _ := parseWire(data); f.Method == "_gateway/resync_required" {
						ferr = fmt.Errorf("resync at %d: %s", last, data)
						break read
					}
				}
				evID, data = "", nil
			case bytes.HasPrefix(line, []byte("id: ")):
				evID = string(line[4:])
			case bytes.HasPrefix(line, []byte("data: ")):
				data = append([]byte(nil), line[6:]...)
			}
		}
		stop()
		cancel()
		resp.Body.Close()
		if ferr != nil {
			return got, ferr
		}
	}
}
