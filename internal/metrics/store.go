package metrics

import "github.com/prometheus/client_golang/prometheus"

// StoreStats is the store's state at a scrape (--data-dir): sums over the sessions' write-behinds, the
// oldest unacknowledged frame's age, and whether the store connection is up.
type StoreStats struct {
	LagFrames     uint64
	LagBytes      int64
	LagSeconds    float64
	PublishErrors uint64
	Frames        uint64
	Gaps          uint64
	FeedStalls    uint64
	Up            bool
}

// WatchStore registers the gateway_store_* metrics, read from fn at each scrape.
func (m *Metrics) WatchStore(fn func() StoreStats) {
	if m == nil {
		return
	}
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	m.reg.MustRegister(&storeCollector{fn: fn, descs: []*prometheus.Desc{
		d("gateway_store_lag_frames", "Frames appended but not yet acknowledged by the store, over every session."),
		d("gateway_store_lag_bytes", "Bytes of frames not yet acknowledged by the store, over every session."),
		d("gateway_store_lag_seconds", "Age of the oldest frame not yet acknowledged by the store (max over sessions)."),
		d("gateway_store_publish_errors_total", "Publishes to the store that failed (then retried)."),
		d("gateway_store_frames_total", "Frames acknowledged by the store."),
		d("gateway_store_gaps_total", "Ranges of frames trimmed before they were stored (--store-max-lag)."),
		d("gateway_store_up", "1 while the store connection is up."),
		d("gateway_store_feed_stalls_total", "Reads of a session's stored log that got nothing from the store, not even a heartbeat, for 2 s and whose pull the server no longer held."),
	}})
}

type storeCollector struct {
	fn    func() StoreStats
	descs []*prometheus.Desc
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.fn()
	up := 0.0
	if s.Up {
		up = 1
	}
	vals := []struct {
		t prometheus.ValueType
		v float64
	}{
		{prometheus.GaugeValue, float64(s.LagFrames)}, {prometheus.GaugeValue, float64(s.LagBytes)},
		{prometheus.GaugeValue, s.LagSeconds}, {prometheus.CounterValue, float64(s.PublishErrors)},
		{prometheus.CounterValue, float64(s.Frames)}, {prometheus.CounterValue, float64(s.Gaps)},
		{prometheus.GaugeValue, up}, {prometheus.CounterValue, float64(s.FeedStalls)},
	}
	for i, d := range c.descs {
		ch <- prometheus.MustNewConstMetric(d, vals[i].t, vals[i].v)
	}
}
