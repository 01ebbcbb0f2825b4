package jsstore_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/eventlog"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// BenchmarkPersist measures frames/s of 256-byte frames through one session's writer into the embedded store,
// from Append to acknowledged.
func BenchmarkPersist(b *testing.B) {
	srv := natstest.Embedded(b)
	st := open(b, srv, jsstore.Options{MaxLag: 1 << 30})
	l := eventlog.NewLog(eventlog.LogLimits{MaxFrames: 10_000})
	p := st.Persist("bench", "e1", l, 0)
	defer p.Stop()
	frame := bytes.Repeat([]byte("x"), 256)
	b.SetBytes(int64(len(frame)))
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := l.Append(eventlog.KindUpdate, func(uint64) ([]byte, error) { return frame, nil }); err != nil {
			b.Fatal(err)
		}
	}
	flush(b, p)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "frames/s")
}
