package main

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// recorder collects what one client saw of one flood: chunk latencies (send stamp → receipt), counts and the
// time of the last update. It does the same minimal work for every row (find the stamp, no JSON decode), so
// rows differ only by the path in between.
type recorder struct {
	lat     []int64 // ns, one per chunk
	updates int     // every stamped update (chunks and tool updates)
	chunks  int
	last    int64 // unix ns of the last stamped update
	seqGaps int   // gateway rows: frames whose seq was not the previous + 1
	prevSeq uint64
}

func newRecorder(n int) *recorder { return &recorder{lat: make([]int64, 0, n)} }

var (
	tokSentNs = []byte(`"sentNs":`)
	tokChunk  = []byte(`"agent_message_chunk"`)
	tokSeq    = []byte(`"gateway":{"seq":`)
)

// update records a frame carrying a flood stamp; false when it has none.
func (r *recorder) update(frame []byte, now int64) bool {
	i := bytes.Index(frame, tokSentNs)
	if i < 0 {
		return false
	}
	sent := parseInt(frame[i+len(tokSentNs):])
	r.updates++
	r.last = now
	if bytes.Contains(frame, tokChunk) {
		r.chunks++
		r.lat = append(r.lat, now-sent)
	}
	return true
}

// seq checks gateway frames for contiguous seqs.
func (r *recorder) seq(frame []byte) {
	i := bytes.Index(frame, tokSeq)
	if i < 0 {
		return
	}
	s := uint64(parseInt(frame[i+len(tokSeq):]))
	if s == 0 { // re-sent pending permission request: not part of the order
		return
	}
	if r.prevSeq != 0 && s != r.prevSeq+1 {
		r.seqGaps++
	}
	r.prevSeq = s
}

func parseInt(b []byte) int64 {
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + int64(c-'0')
	}
	return v
}

// percentile of sorted ns values, in ms.
func pctMs(sorted []int64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / 1e6
}

func median(v []float64) float64 {
	var ok []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			ok = append(ok, x)
		}
	}
	if len(ok) == 0 {
		return math.NaN()
	}
	slices.Sort(ok)
	if len(ok)%2 == 1 {
		return ok[len(ok)/2]
	}
	return (ok[len(ok)/2-1] + ok[len(ok)/2]) / 2
}

// flood is the result of one client of one flood run.
type flood struct {
	Updates   int     `json:"updates"`
	Chunks    int     `json:"chunks"`
	UpdPerSec float64 `json:"updatesPerSec"`
	MBPerSec  float64 `json:"payloadMBPerSec"`
	P50ms     float64 `json:"p50ms"`
	P99ms     float64 `json:"p99ms"`
	EndTurnMs float64 `json:"endTurnMs"`
	Errors    int     `json:"errors"`
	// CPUus is CPU time per agent update of the process in the middle: the gateway on gateway rows (from its
	// process_cpu_seconds_total), the flood agent itself on direct rows. NaN when not measured.
	CPUus float64 `json:"cpuMicrosPerUpdate"`
	// GCs and GCPauseMs are the gateway's GC cycles and their summed stop-the-world pauses during the flood
	// (go_gc_duration_seconds); NaN on direct rows.
	GCs       float64 `json:"gatewayGCs"`
	GCPauseMs float64 `json:"gatewayGCPauseMs"`
	// ClientCPUus is this process's CPU time per update per client during the flood: what the benchmark's
	// own clients spend reading (they share the cores with the agent and the gateway). NaN when not measured.
	ClientCPUus float64 `json:"clientCpuMicrosPerUpdate"`
	// WritesPerFrame is the gateway's write-family syscalls per update per client during the flood (Linux
	// /proc/<pid>/io syscw). It counts every write of the process (sockets, the agent's stdin, the runtime's
	// eventfd wake-ups, a store's files), so it is an upper bound on the frame writes: below 1, frames are
	// batched. NaN when not measured.
	WritesPerFrame float64 `json:"gatewayWritesPerFramePerClient"`
	// AgentCPUus is the agent's CPU time per update during the flood on gateway rows (the gateway's child
	// processes, /proc); on direct rows the agent's whole run, start-up included. NaN when not measured.
	AgentCPUus float64 `json:"agentCpuMicrosPerUpdate"`
}

// result turns a recorder into figures: throughput over prompt sent → last update received.
func (r *recorder) result(promptAt time.Time, endAt int64, payload int, errs int) flood {
	f := flood{Updates: r.updates, Chunks: r.chunks, Errors: errs + r.seqGaps, CPUus: math.NaN(), GCs: math.NaN(), GCPauseMs: math.NaN(), ClientCPUus: math.NaN(), WritesPerFrame: math.NaN(), AgentCPUus: math.NaN()}
	if r.chunks == 0 {
		f.UpdPerSec, f.MBPerSec, f.P50ms, f.P99ms, f.EndTurnMs = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
		return f
	}
	d := float64(r.last-promptAt.UnixNano()) / 1e9
	f.UpdPerSec = float64(r.updates) / d
	f.MBPerSec = float64(r.chunks) * float64(payload) / d / 1e6
	slices.Sort(r.lat)
	f.P50ms = pctMs(r.lat, 50)
	f.P99ms = pctMs(r.lat, 99)
	f.EndTurnMs = float64(endAt-promptAt.UnixNano()) / 1e6
	return f
}

// merge combines the clients of one run: throughput is the median client's, latency the pooled samples.
func merge(recs []*recorder, fl []flood) flood {
	if len(fl) == 1 {
		return fl[0]
	}
	var all []int64
	var ups, mbs, ends []float64
	out := flood{CPUus: fl[0].CPUus, GCs: fl[0].GCs, GCPauseMs: fl[0].GCPauseMs, ClientCPUus: fl[0].ClientCPUus, WritesPerFrame: fl[0].WritesPerFrame, AgentCPUus: fl[0].AgentCPUus}
	for i, f := range fl {
		out.Errors += f.Errors
		out.Updates = max(out.Updates, f.Updates)
		out.Chunks = max(out.Chunks, f.Chunks)
		ups = append(ups, f.UpdPerSec)
		mbs = append(mbs, f.MBPerSec)
		ends = append(ends, f.EndTurnMs)
		all = append(all, recs[i].lat...)
	}
	slices.Sort(all)
	out.UpdPerSec, out.MBPerSec, out.EndTurnMs = median(ups), median(mbs), median(ends)
	out.P50ms, out.P99ms = pctMs(all, 50), pctMs(all, 99)
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// selfCPU is this process's CPU time so far (user + system).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
