package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestDeliveryChaosResume runs 50 WebSocket clients over three demo sessions while turns run. Every client is
// cut off at points a seeded RNG picks (after k frames, abruptly or with a close frame, sometimes in the middle
// of its replay) and resumes with after=<last seq>&epoch=<epoch>. At the end each client's logged frames must be
// exactly the session's log: nothing lost, nothing twice, same order, the same bytes.
func TestDeliveryChaosResume(t *testing.T) {
	const (
		nSessions = 3
		nClients  = 50
		nTurns    = 20
		seed      = 20240611
	)
	start := time.Now()
	// The default client cap (64 per session) stays on: ~17 clients per session reconnecting all the time must
	// not run into it unless closed connections leak their slot (a 503 is retried and counted, like a real
	// client backing off).
	g := startGateway(t)
	type sess struct{ id, epoch string }
	ss := make([]sess, nSessions)
	for i := range ss {
		s := g.createSession(map[string]any{"permissionPolicy": "approve-all"})
		ss[i] = sess{s.ID, s.Epoch}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	// Targets: the head of each session once all its turns are over; clients stop when they reach it.
	targetsKnown, markKnown := context.WithCancel(context.Background())
	defer markKnown()
	targets := make([]uint64, nSessions)

	var reconnects, closedByUs, framesSeen, full503 atomic.Int64
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
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			si := i % nSessions
			got, err := chaosClient(ctx, func(int) *gateway { return g }, ss[si].id, ss[si].epoch, rng, targetsKnown, func() uint64 { return targets[si] },
				&reconnects, &closedByUs, &framesSeen, &full503)
			results[i] = result{si, got, err}
		}()
	}

	// Turns: full turns (tool calls, a permission request resolved by the policy) and quick ones.
	var turnWG sync.WaitGroup
	turnErrs := make([]error, nSessions)
	for si := range ss {
		turnWG.Add(1)
		go func() {
			defer turnWG.Done()
			for n := range nTurns {
				text := "chaos turn " + strconv.Itoa(n) + " of session " + strconv.Itoa(si)
				if n%3 == 2 {
					text = "quick"
				}
				var res struct{ StopReason string }
				code, body, err := g.httpDo(ctx, "POST", "/v1/sessions/"+ss[si].id+"/prompt?wait=true", map[string]string{"text": text}, &res)
				if err != nil || code != http.StatusOK || res.StopReason != "end_turn" {
					turnErrs[si] = fmt.Errorf("turn %d: %d %v %s", n, code, err, body)
					return
				}
			}
		}()
	}
	turnWG.Wait()
	for si, err := range turnErrs {
		if err != nil {
			t.Fatalf("session %d: %v", si, err)
		}
	}
	for si := range ss {
		var v sessionJSON
		g.do("GET", "/v1/sessions/"+ss[si].id, nil, &v)
		targets[si] = v.LastSeq
	}
	markKnown() // happens-before every read of targets in the clients (context cancellation is synchronising)
	wg.Wait()

	full := make([][]logEntry, nSessions)
	for si := range ss {
		full[si] = g.fullLogWS(t, ss[si].id, ss[si].epoch)
		if uint64(len(full[si])) < targets[si] {
			t.Fatalf("session %d: full log has %d frames, head was %d", si, len(full[si]), targets[si])
		}
	}
	for i, r := range results {
		if r.err != nil {
			t.Errorf("client %d: %v", i, r.err)
			continue
		}
		want := full[r.session]
		if uint64(len(r.got)) < targets[r.session] {
			t.Errorf("client %d: %d frames, want at least %d", i, len(r.got), targets[r.session])
			continue
		}
		if len(r.got) > len(want) {
			t.Errorf("client %d: %d frames, the log has %d", i, len(r.got), len(want))
			continue
		}
		for k, e := range r.got {
			if e.Seq != want[k].Seq || !bytes.Equal(e.Raw, want[k].Raw) {
				t.Errorf("client %d: frame %d differs:\n got %d %s\nwant %d %s", i, k, e.Seq, e.Raw, want[k].Seq, want[k].Raw)
				break
			}
		}
	}
	t.Logf("%d clients, %d sessions x %d turns (%v frames): %d reconnects (%d cut by the test), %d frames read, %d dials refused 503, %s",
		nClients, nSessions, nTurns, targets, reconnects.Load(), closedByUs.Load(), framesSeen.Load(), full503.Load(), time.Since(start).Round(time.Millisecond))
	if full503.Load() > 0 {
		t.Errorf("%d dials were refused with 503 (client cap 64, at most 17 clients per session)", full503.Load())
	}
	if reconnects.Load() < nClients {
		t.Errorf("only %d reconnects: the chaos did not happen", reconnects.Load())
	}
}

// chaosClient follows one session, cutting its own connection after a random number of frames and resuming
// (connection k on gateway pick(k)), until it holds every frame up to the target. It checks contiguity as it goes: every logged frame must be
// exactly last+1.
func chaosClient(ctx context.Context, pick func(attempt int) *gateway, id, epoch string, rng *rand.Rand, targetsKnown context.Context,
	target func() uint64, reconnects, closedByUs, framesSeen, full503 *atomic.Int64) ([]logEntry, error) {
	var got []logEntry
	last := uint64(0)
	first := true
	for attempt := 0; ; attempt++ {
		known := targetsKnown.Err() != nil
		if known && last >= target() {
			return got, nil
		}
		if attempt > 2000 {
			return got, fmt.Errorf("gave up after %d connections at seq %d", attempt, last)
		}
		if ctx.Err() != nil {
			return got, fmt.Errorf("safety timeout at seq %d (target known %v)", last, known)
		}
		path := fmt.Sprintf("/v1/sessions/%s/ws?after=%d&epoch=%s", id, last, epoch)
		if first && rng.IntN(2) == 0 {
			path = "/v1/sessions/" + id + "/ws" // a fresh client: no cursor at all
		}
		cctx, cancel := context.WithCancel(ctx)
		stop := func() bool { return false }
		if !known {
			// When the turns are over, wake a client blocked in Read so it can see it is done.
			stop = context.AfterFunc(targetsKnown, cancel)
		}
		c, resp, err := websocket.Dial(cctx, pick(attempt).wsURL(path), nil)
		if err != nil {
			stop()
			cancel()
			if cctx.Err() != nil && ctx.Err() == nil {
				continue
			}
			if resp != nil && resp.StatusCode == http.StatusServiceUnavailable {
				full503.Add(1)
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return got, fmt.Errorf("dial: %w", err)
		}
		if !first {
			reconnects.Add(1)
		}
		first = false
		c.SetReadLimit(64 << 20)
		budget := 1 + rng.IntN(30) // frames (of any kind) before the test cuts the connection
		if rng.IntN(8) == 0 {
			budget = 1 << 30 // sometimes: stay until done
		}
		abrupt := rng.IntN(2) == 0
		replayDone := false
		var ferr error
		for n := 0; ; n++ {
			if n == budget {
				closedByUs.Add(1)
				if abrupt {
					c.CloseNow()
				} else {
					c.Close(websocket.StatusNormalClosure, "chaos")
				}
				break
			}
			if known && last >= target() {
				c.Close(websocket.StatusNormalClosure, "done")
				break
			}
			_, data, err := c.Read(cctx)
			if err != nil {
				// Woken up (turns over) or the server closed: either way, resume.
				if st := websocket.CloseStatus(err); st != -1 && st != websocket.StatusNormalClosure {
					ferr = fmt.Errorf("server closed with %d at seq %d", st, last)
				}
				c.CloseNow()
				break
			}
			framesSeen.Add(1)
			f, err := parseWire(data)
			if err != nil {
				ferr = fmt.Errorf("non-JSON frame %q", data)
				break
			}
			switch f.Method {
			case "_gateway/replay_complete":
				if replayDone {
					ferr = errors.New("second replay_complete on one connection")
				}
				replayDone = true
				continue
			case "_gateway/resync_required", "_gateway/slow_client":
				ferr = fmt.Errorf("unexpected %s at seq %d: %s", f.Method, last, data)
			}
			if ferr != nil {
				break
			}
			seq := f.Params.Meta.Gateway.Seq
			if seq == 0 {
				continue
			}
			if f.Params.Meta.Gateway.Epoch != epoch {
				ferr = fmt.Errorf("frame of epoch %q: %s", f.Params.Meta.Gateway.Epoch, data)
				break
			}
			if seq != last+1 {
				ferr = fmt.Errorf("seq %d after %d (replay done %v): %s", seq, last, replayDone, data)
				break
			}
			got = append(got, logEntry{seq, data})
			last = seq
		}
		stop()
		cancel()
		c.CloseNow()
		if ferr != nil {
			return got, ferr
		}
	}
}
