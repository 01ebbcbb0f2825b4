package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// faceClient is one client of one gateway face (session WebSocket, /acp, SSE, pages) during a flood: it yields
// frames one at a time and says what a frame without a flood stamp means. measureFlood is the one loop that
// drives every face, so rows differ only by the face.
type faceClient interface {
	// next returns the next frame; it stays valid until the following call.
	next(ctx context.Context) ([]byte, error)
	// control classifies a frame that carries no flood stamp (and may answer it, e.g. a permission request).
	control(ctx context.Context, frame []byte) frameKind
	close()
}

type frameKind int

const (
	sigNone   frameKind = iota
	sigReady            // caught up with the session: the prompt may be sent
	sigEnd              // the turn ended with end_turn
	sigEndBad           // the turn ended with another stop reason
	sigSlow             // a slow-client warning
)

// floodClient is a faceClient and how its face shows the start and the end of the flood.
type floodClient struct {
	face faceClient
	// ready: the face has no replay marker, the client is caught up once opened.
	ready bool
	// untilChunks: the client never sees the turn's end (an /acp socket that did not send the prompt), so it
	// is done after the flood's n chunks.
	untilChunks bool
}

// clientRun is what one client's reader goroutine saw; owned by that goroutine until done.Wait.
type clientRun struct {
	rec   *recorder
	end   int64
	errs  int
	warns int
	err   error
}

// measureFlood waits until every client is caught up, sends the prompt, reads every client until the turn's
// end and returns the per-client figures (throughput of the median client, latency pooled over all clients)
// with the gateway's CPU per update. The clients are closed on return.
func measureFlood(ctx context.Context, label string, g *gatewayProc, cls []floodClient, n, size int, prompt func(context.Context) error) (flood, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() {
		for _, c := range cls {
			c.face.close()
		}
	}()
	runs := make([]*clientRun, len(cls))
	var ready, done sync.WaitGroup
	for i, c := range cls {
		st := &clientRun{rec: newRecorder(n)}
		runs[i] = st
		done.Add(1)
		isReady := c.ready
		if !isReady {
			ready.Add(1)
		}
		go func() {
			defer done.Done()
			defer func() {
				if !isReady {
					ready.Done()
				}
			}()
			for {
				b, err := c.face.next(ctx)
				now := time.Now().UnixNano()
				if err != nil {
					st.err = err
					st.errs++
					return
				}
				if st.rec.update(b, now) {
					st.rec.seq(b)
					if c.untilChunks && st.rec.chunks == n {
						st.end = now
						return
					}
					continue
				}
				st.rec.seq(b)
				switch c.face.control(ctx, b) {
				case sigReady:
					if !isReady {
						isReady = true
						ready.Done()
					}
				case sigEndBad:
					st.errs++
					fallthrough
				case sigEnd:
					st.end = now
					return
				case sigSlow:
					st.warns++
				}
			}
		}()
	}
	ready.Wait()
	at0 := g.sample(ctx)
	cpu0 := selfCPU()
	t0 := time.Now()
	if err := prompt(ctx); err != nil {
		cancel() // ends the WebSocket and page reads
		for _, c := range cls {
			c.face.close() // an SSE body read does not watch ctx
		}
		done.Wait()
		return flood{}, fmt.Errorf("prompt: %w", err)
	}
	done.Wait()
	clientCPU := selfCPU() - cpu0
	recs := make([]*recorder, len(cls))
	fl := make([]flood, len(cls))
	var firstErr error
	for i, st := range runs {
		errs := st.errs
		if st.rec.chunks != n {
			errs++
		}
		if st.err != nil && firstErr == nil {
			firstErr = st.err
		}
		recs[i] = st.rec
		end := st.end
		if end == 0 {
			end = time.Now().UnixNano()
		}
		fl[i] = st.rec.result(t0, end, size, errs)
	}
	out := merge(recs, fl)
	if out.Updates > 0 {
		out.ClientCPUus = float64(clientCPU.Microseconds()) / float64(out.Updates*len(cls))
	}
	if at1 := g.sample(ctx); at0.ok && at1.ok && out.Updates > 0 {
		out.CPUus = (at1.cpu - at0.cpu) * 1e6 / float64(out.Updates)
		out.GCs = at1.gcs - at0.gcs
		out.GCPauseMs = (at1.gcPauses - at0.gcPauses) * 1e3
		out.WritesPerFrame = (at1.writes - at0.writes) / float64(out.Updates*len(cls))
		out.AgentCPUus = (at1.agentCPU - at0.agentCPU) * 1e6 / float64(out.Updates)
	}
	if out.Errors > 0 && firstErr != nil {
		var ce websocket.CloseError
		if errors.As(firstErr, &ce) {
			warnf("%s x%d: a client ended with close %d %q", label, len(cls), ce.Code, ce.Reason)
		} else {
			warnf("%s x%d: a client ended with %v", label, len(cls), firstErr)
		}
	}
	return out, nil
}

// gatewayControl reads the gateway's own notifications, as the session WebSocket and SSE carry them.
func gatewayControl(b []byte) frameKind {
	switch {
	case bytes.Contains(b, tokReplayDone):
		return sigReady
	case bytes.Contains(b, tokTurnEnded):
		if bytes.Contains(b, tokEndTurn) {
			return sigEnd
		}
		return sigEndBad
	case bytes.Contains(b, tokSlow):
		return sigSlow
	}
	return sigNone
}
