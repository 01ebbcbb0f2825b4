package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// runRestartHydrate measures --data-dir's restart path: a session floods n frames, the gateway stops
// gracefully, a new one starts on the same data dir, and the first GET of the session (which hydrates it
// from the store) is timed. It returns the median of runs such restarts, in milliseconds.
func runRestartHydrate(ctx context.Context, o options, tmp string, extra []string) (float64, error) {
	flags := append(append([]string(nil), extra...), "--data-dir", filepath.Join(tmp, "hydrate-data"), "--log-max-frames", "0")
	g, err := startGateway(o.gatewayBin, tmp, "gateway-hydrate", false, flags...)
	if err != nil {
		return 0, err
	}
	id, err := g.createSession(ctx, "flood")
	if err == nil {
		body := map[string]any{"prompt": []map[string]string{{"type": "text", "text": fmt.Sprintf("flood %d %d", o.n, o.size)}}}
		_, err = g.do(ctx, "POST", "/v1/sessions/"+id+"/prompt?wait=true", body, nil)
	}
	g.stop() // graceful: every frame is flushed and the entry says clean
	if err != nil {
		return 0, err
	}
	var ms []float64
	for r := 0; r < o.runs; r++ {
		g, err := startGateway(o.gatewayBin, tmp, "gateway-hydrate", false, flags...)
		if err != nil {
			return 0, err
		}
		var v struct {
			LastSeq uint64 `json:"lastSeq"`
		}
		began := time.Now()
		_, err = g.do(ctx, "GET", "/v1/sessions/"+id, nil, &v)
		took := time.Since(began)
		g.stop()
		if err != nil {
			return 0, err
		}
		if v.LastSeq < uint64(o.n) {
			return 0, fmt.Errorf("hydrated %d frames, flooded %d", v.LastSeq, o.n)
		}
		ms = append(ms, float64(took.Microseconds())/1000)
	}
	return median(ms), nil
}
