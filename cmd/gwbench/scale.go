package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

type scaleResult struct {
	IdleFloodSessions        int                           `json:"idleFloodSessions"`
	HeapPerIdleSessionKiB    float64                       `json:"heapPerIdleSessionKiB"`
	RSSPerIdleSessionKiB     float64                       `json:"rssPerIdleSessionKiB"`
	GoroutinesPerIdleSession float64                       `json:"goroutinesPerIdleSession"`
	Sessions                 int                           `json:"sessions"`
	ClientsPerSession        int                           `json:"clientsPerSession"`
	HeapPerDemoSessionKiB    float64                       `json:"heapPerDemoSessionKiB"`
	RSSPerDemoSessionKiB     float64                       `json:"rssPerDemoSessionKiB"`
	GoroutinesPerDemoSession float64                       `json:"goroutinesPerDemoSession"`
	HeapPerWSKiB             float64                       `json:"heapPerWebSocketKiB"`
	RSSPerWSKiB              float64                       `json:"rssPerWebSocketKiB"`
	GoroutinesPerWS          float64                       `json:"goroutinesPerWebSocket"`
	TurnsPerSec              float64                       `json:"turnsPerSec"`
	TurnP50ms                float64                       `json:"turnP50ms"`
	TurnP99ms                float64                       `json:"turnP99ms"`
	TurnWallMs               float64                       `json:"turnWallMs"`
	SetupErrors              int                           `json:"setupErrors"`
	TurnErrors               int                           `json:"turnErrors"`
	ClientErrors             int                           `json:"clientErrors"`
	MissedTurnEnded          int                           `json:"missedTurnEnded"`
	Metrics                  map[string]map[string]float64 `json:"metrics"`
}

func (s *scaleResult) Errors() int {
	return s.SetupErrors + s.TurnErrors + s.ClientErrors + s.MissedTurnEnded
}

var scaleMetrics = []string{"go_memstats_heap_inuse_bytes", "process_resident_memory_bytes", "go_goroutines"}

// snapshot forces a GC in the gateway (pprof heap?gc=1) and reads its /metrics.
func (g *gatewayProc) snapshot(ctx context.Context) (map[string]float64, error) {
	if g.debugAddr != "" {
		if resp, err := http.Get("http://" + g.debugAddr + "/debug/pprof/heap?gc=1"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", g.base+"/metrics", nil)
	resp, err := httpc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		for _, m := range scaleMetrics {
			if strings.HasPrefix(l, m+" ") {
				v, _ := strconv.ParseFloat(strings.TrimSpace(l[len(m)+1:]), 64)
				out[m] = v
			}
		}
	}
	return out, sc.Err()
}

// saveHeapProfile writes the gateway's heap profile (after a GC) to path.
func (g *gatewayProc) saveHeapProfile(path string) error {
	resp, err := http.Get("http://" + g.debugAddr + "/debug/pprof/heap?gc=1")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// parallel runs f(i) for i in [0,n) on w workers.
func parallel(n, w int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// runScale measures idle cost and one turn everywhere at once, on a gateway of its own.
func runScale(ctx context.Context, o options, tmp string, extra []string) (*scaleResult, error) {
	// Every session's turn starts at once: that many connections are new at the same moment, more than the
	// default --max-unauthenticated-conns (sized for a 1 024-descriptor limit) lets in, so the run sizes it.
	unauth := strconv.Itoa(2 * o.scaleSess)
	args := append([]string{"--demo-delay", "0", "--max-clients", "100", "--idle-ttl", "0", "--permission-timeout", "5m",
		"--max-unauthenticated-conns", unauth}, extra...)
	g, err := startGateway(o.gatewayBin, tmp, "gateway-scale", true, args...)
	if err != nil {
		return nil, err
	}
	defer g.stop()
	sr := &scaleResult{IdleFloodSessions: o.idleFlood, Sessions: o.scaleSess, ClientsPerSession: o.scaleCli, Metrics: map[string]map[string]float64{}}
	snap := func(name string) (map[string]float64, error) {
		time.Sleep(200 * time.Millisecond) // let goroutines of just-finished requests exit
		m, err := g.snapshot(ctx)
		sr.Metrics[name] = m
		return m, err
	}
	per := func(a, b map[string]float64, key string, n int, div float64) float64 {
		return (b[key] - a[key]) / float64(n) / div
	}
	base, err := snap("baseline")
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var setupErr error
	fail := func(err error) {
		mu.Lock()
		sr.SetupErrors++
		if setupErr == nil {
			setupErr = err
		}
		mu.Unlock()
	}

	// Idle flood sessions: the agent is another process, so the gateway's figures are the session's alone.
	floodIDs := make([]string, o.idleFlood)
	parallel(o.idleFlood, 8, func(i int) {
		id, err := g.createSession(ctx, "flood")
		if err != nil {
			fail(err)
			return
		}
		floodIDs[i] = id
	})
	afterFlood, err := snap("idle_flood_sessions")
	if err != nil {
		return nil, err
	}
	if o.idleFlood > 0 {
		sr.HeapPerIdleSessionKiB = per(base, afterFlood, "go_memstats_heap_inuse_bytes", o.idleFlood, 1024)
		sr.RSSPerIdleSessionKiB = per(base, afterFlood, "process_resident_memory_bytes", o.idleFlood, 1024)
		sr.GoroutinesPerIdleSession = per(base, afterFlood, "go_goroutines", o.idleFlood, 1)
	}
	parallel(o.idleFlood, 8, func(i int) {
		if floodIDs[i] != "" {
			_, _ = g.do(ctx, "DELETE", "/v1/sessions/"+floodIDs[i], nil, nil)
		}
	})
	base2, err := snap("after_flood_closed")
	if err != nil {
		return nil, err
	}

	// Demo sessions (agent in process: its connection and goroutines count too).
	ids := make([]string, o.scaleSess)
	parallel(o.scaleSess, 16, func(i int) {
		id, err := g.createSession(ctx, "demo")
		if err != nil {
			fail(err)
			return
		}
		ids[i] = id
	})
	afterSess, err := snap("demo_sessions")
	if err != nil {
		return nil, err
	}
	if o.heapProfile != "" {
		if err := g.saveHeapProfile(o.heapProfile); err != nil {
			warnf("heap profile: %v", err)
		}
	}
	sr.HeapPerDemoSessionKiB = per(base2, afterSess, "go_memstats_heap_inuse_bytes", o.scaleSess, 1024)
	sr.RSSPerDemoSessionKiB = per(base2, afterSess, "process_resident_memory_bytes", o.scaleSess, 1024)
	sr.GoroutinesPerDemoSession = per(base2, afterSess, "go_goroutines", o.scaleSess, 1)

	// Idle WebSockets: each reads until the end and counts the turn_ended it sees.
	cctx, stopClients := context.WithCancel(ctx)
	defer stopClients()
	var turnEnded, clientErrs atomic.Int64
	var ready sync.WaitGroup
	var readers sync.WaitGroup
	nws := o.scaleSess * o.scaleCli
	conns := make([]*websocket.Conn, nws)
	parallel(nws, 32, func(i int) {
		id := ids[i/o.scaleCli]
		if id == "" {
			return
		}
		c, _, err := websocket.Dial(ctx, g.wsURL(id), nil)
		if err != nil {
			fail(fmt.Errorf("dial: %w", err))
			return
		}
		conns[i] = c
		ready.Add(1)
		readers.Add(1)
		go func() {
			defer readers.Done()
			fr := coderConn{c: c}
			isReady := false
			for {
				b, err := fr.next(cctx)
				if err != nil {
					if !isReady {
						ready.Done()
					}
					if cctx.Err() == nil {
						clientErrs.Add(1)
					}
					return
				}
				if !isReady && bytes.Contains(b, tokReplayDone) {
					isReady = true
					ready.Done()
				}
				if bytes.Contains(b, tokTurnEnded) {
					turnEnded.Add(1)
				}
			}
		}()
	})
	ready.Wait()
	afterWS, err := snap("idle_websockets")
	if err != nil {
		return nil, err
	}
	if nws > 0 {
		sr.HeapPerWSKiB = per(afterSess, afterWS, "go_memstats_heap_inuse_bytes", nws, 1024)
		sr.RSSPerWSKiB = per(afterSess, afterWS, "process_resident_memory_bytes", nws, 1024)
		sr.GoroutinesPerWS = per(afterSess, afterWS, "go_goroutines", nws, 1)
	}

	// One turn in every session at once.
	lat := make([]float64, 0, o.scaleSess)
	var latMu sync.Mutex
	var turnErrs atomic.Int64
	t0 := time.Now()
	var wg sync.WaitGroup
	for _, id := range ids {
		if id == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			var res struct {
				StopReason string `json:"stopReason"`
			}
			_, err := g.do(ctx, "POST", "/v1/sessions/"+id+"/prompt?wait=true", map[string]string{"text": "quick"}, &res)
			d := time.Since(start)
			if err != nil || res.StopReason != "end_turn" {
				if turnErrs.Add(1) == 1 {
					warnf("scale: a turn failed: %v (stopReason %q)", err, res.StopReason)
				}
				return
			}
			latMu.Lock()
			lat = append(lat, float64(d.Microseconds())/1000)
			latMu.Unlock()
		}()
	}
	wg.Wait()
	wall := time.Since(t0)
	// Every socket must see its session's turn_ended.
	want := int64(0)
	for _, c := range conns {
		if c != nil {
			want++
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for turnEnded.Load() < want && time.Now().Before(deadline) && clientErrs.Load() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	sr.TurnErrors = int(turnErrs.Load())
	sr.MissedTurnEnded = int(want - turnEnded.Load())
	sr.ClientErrors = int(clientErrs.Load())
	sr.TurnWallMs = float64(wall.Microseconds()) / 1000
	sr.TurnsPerSec = float64(len(lat)) / wall.Seconds()
	slices.Sort(lat)
	if len(lat) > 0 {
		sr.TurnP50ms = lat[(len(lat)-1)/2]
		sr.TurnP99ms = lat[min(len(lat)-1, int(float64(len(lat))*0.99))]
	}
	_, _ = snap("after_turns")
	stopClients()
	for _, c := range conns {
		if c != nil {
			c.CloseNow()
		}
	}
	readers.Wait()
	if setupErr != nil {
		fmt.Fprintf(os.Stderr, "gwbench: scale: %d setup errors, first: %v\n", sr.SetupErrors, setupErr)
	}
	return sr, nil
}
