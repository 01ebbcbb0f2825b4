package metrics

import "github.com/prometheus/client_golang/prometheus"

// Face is the counters of one streaming face (ws, sse, acp), looked up once: its frame counters run for
// every frame and client. Every method is safe on a nil *Face (metrics left out).
type Face struct {
	// Static after construction.
	frames, bytes prometheus.Counter
	evictions     prometheus.Counter
	clients       prometheus.Gauge
}

// Faces are the streaming faces.
var faces = []string{"ws", "sse", "acp"}

// Face returns the counters of a streaming face ("ws", "sse", "acp"); nil when m is nil.
func (m *Metrics) Face(name string) *Face {
	if m == nil {
		return nil
	}
	if f, ok := m.faces[name]; ok {
		return f
	}
	return m.newFace(name)
}

func (m *Metrics) newFace(name string) *Face {
	return &Face{
		frames:    m.framesOut.WithLabelValues(name),
		bytes:     m.bytesOut.WithLabelValues(name),
		evictions: m.evictions.WithLabelValues(name),
		clients:   m.clients.WithLabelValues(name),
	}
}

// FrameOut counts a frame of n bytes written to a client.
func (f *Face) FrameOut(n int) {
	if f != nil {
		f.frames.Inc()
		f.bytes.Add(float64(n))
	}
}

// Connected adds delta (+1 on connect, -1 on disconnect) to the face's connected clients.
func (f *Face) Connected(delta int) {
	if f != nil {
		f.clients.Add(float64(delta))
	}
}

// Evicted counts a client closed for falling too far behind.
func (f *Face) Evicted() {
	if f != nil {
		f.evictions.Inc()
	}
}
