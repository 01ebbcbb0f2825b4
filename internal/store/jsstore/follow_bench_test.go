package jsstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store"
)

// floodFrame is a logged flood chunk as the owner stores it: about the size of gwbench's 256-byte updates.
func floodFrame(seq uint64) []byte {
	return []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a",` +
		`"update":{"_meta":{"flood":{"i":4242,"sentNs":1767225600123456789}},"content":{"text":"` + strings.Repeat("x", 256) +
		`","type":"text"},"sessionUpdate":"agent_message_chunk","messageId":"3a2b1c0d-m1"},"_meta":{"gateway":{"seq":` +
		strconv.FormatUint(seq, 10) + `,"epoch":"e1","turnId":"3a2b1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9"}}}}`)
}

// BenchmarkPersistFollowR3 is the non-owner row below the session core on a real 3-node cluster: frames
// appended to the owner's log, stored by its fenced writer through n1 into the R3 log and fed live to a
// follower on n2, timed from the first append to the last frame the follower got. Its CPU profile is both
// gateways' store work (the servers are other processes). Run it with a fixed -benchtime (e.g. 20000x): each
// call starts a cluster.
func BenchmarkPersistFollowR3(b *testing.B) {
	nc := startNATSCluster(b)
	owner, follower := nc.connect(b, 0), nc.connect(b, 1)
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 10_000})
	p := owner.Persist("bench", "e1", l, 0)
	defer p.Stop()
	frames := make([][]byte, b.N)
	for i := range frames {
		frames[i] = floodFrame(uint64(i + 1))
	}
	ctx, cancel := context.WithCancel(ctxT(b))
	defer cancel()
	all := make(chan struct{})
	followed := make(chan error, 1)
	caught := make(chan struct{})
	go func() {
		followed <- follower.Follow(ctx, "bench", func(f store.StoredFrame) error {
			if f.GapTo > 0 {
				b.Errorf("gap %d-%d", f.Seq, f.GapTo)
			}
			if f.Seq == uint64(b.N) {
				close(all)
			}
			return nil
		}, func() { close(caught) })
	}()
	<-caught
	b.SetBytes(int64(len(frames[0])))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if _, err := l.Append(eventlog.KindUpdate, func(uint64) ([]byte, error) { return frames[i], nil }); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-all:
	case err := <-followed:
		b.Fatalf("follow ended: %v", err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "frames/s")
	b.StopTimer()
	cancel()
	<-followed
}
