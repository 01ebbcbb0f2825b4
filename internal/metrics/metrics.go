// Package metrics holds the gateway's Prometheus metrics. Every method is safe on a nil *Metrics, so packages
// can record unconditionally and tests can leave metrics out.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the set of collectors, registered on a registry of its own (not the global one).
type Metrics struct {
	reg *prometheus.Registry

	turnsStarted    prometheus.Counter
	turnsEnded      *prometheus.CounterVec
	updatesIn       prometheus.Counter
	framesOut       *prometheus.CounterVec
	bytesOut        *prometheus.CounterVec
	clients         *prometheus.GaugeVec
	evictions       *prometheus.CounterVec
	permissions     *prometheus.CounterVec
	permLatency     *prometheus.HistogramVec
	agentStarts     *prometheus.CounterVec
	agentExits      *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec

	faces map[string]*Face // Static after construction; the streaming faces' counters.
	usage *usage           // Static after construction; tokens and cost per principal and agent (usage.go).
}

// New returns metrics with Go runtime and process collectors. sessionsByStatus, when not nil, is called at
// scrape time for the sessions gauge, so the count is never out of step with the registry.
func New(sessionsByStatus func() map[string]int) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.turnsStarted = prometheus.NewCounter(prometheus.CounterOpts{Name: "gateway_turns_started_total", Help: "Turns started."})
	m.turnsEnded = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_turns_ended_total", Help: "Turns ended, by stop reason (error when the agent failed the turn)."}, []string{"stop_reason"})
	m.updatesIn = prometheus.NewCounter(prometheus.CounterOpts{Name: "gateway_agent_updates_total", Help: "session/update notifications received from agents."})
	m.framesOut = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_frames_sent_total", Help: "Frames sent to clients, by face."}, []string{"face"})
	m.bytesOut = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_bytes_sent_total", Help: "Frame bytes sent to clients, by face."}, []string{"face"})
	m.clients = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gateway_clients", Help: "Connected streaming clients, by face."}, []string{"face"})
	m.evictions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_slow_client_evictions_total", Help: "Clients closed for falling too far behind, by face."}, []string{"face"})
	m.permissions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_permission_requests_total", Help: "Permission requests resolved, by who resolved them and whether they were allowed."}, []string{"by", "allowed"})
	m.permLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gateway_permission_answer_seconds", Help: "Time from a permission request to its resolution, by who resolved it.", Buckets: []float64{.01, .1, .5, 1, 5, 15, 60, 300}}, []string{"by"})
	m.agentStarts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_agent_starts_total", Help: "Agent processes started, by agent."}, []string{"agent"})
	m.agentExits = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_agent_exits_total", Help: "Agent processes ended, by agent and how (stopped: by the gateway; crashed: on their own)."}, []string{"agent", "how"})
	m.requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gateway_http_request_duration_seconds", Help: "HTTP request duration by route pattern and status code.", Buckets: prometheus.DefBuckets}, []string{"route", "code"})
	for _, c := range []prometheus.Collector{m.turnsStarted, m.turnsEnded, m.updatesIn, m.framesOut, m.bytesOut, m.clients, m.evictions, m.permissions, m.permLatency, m.agentStarts, m.agentExits, m.requestDuration} {
		f(c)
	}
	m.usage = newUsage()
	f(m.usage.tokens)
	f(m.usage.total)
	f(m.usage.cost)
	m.faces = map[string]*Face{}
	for _, name := range faces {
		m.faces[name] = m.newFace(name)
	}
	if sessionsByStatus != nil {
		f(&sessionsCollector{fn: sessionsByStatus, desc: prometheus.NewDesc("gateway_sessions", "Sessions by status.", []string{"status"}, nil)})
	}
	return m
}

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// TurnStarted counts a turn the gateway sent to an agent.
func (m *Metrics) TurnStarted() {
	if m != nil {
		m.turnsStarted.Inc()
	}
}

// TurnEnded counts a turn by how it ended; a turn the agent failed counts as "error".
func (m *Metrics) TurnEnded(stopReason string, failed bool) {
	if m != nil {
		if failed {
			stopReason = "error"
		}
		m.turnsEnded.WithLabelValues(stopReason).Inc()
	}
}

// UpdateIn counts a session/update received from an agent.
func (m *Metrics) UpdateIn() {
	if m != nil {
		m.updatesIn.Inc()
	}
}

// PermissionResolved counts a resolved permission request and how long it waited.
func (m *Metrics) PermissionResolved(by string, allowed bool, waited time.Duration) {
	if m != nil {
		a := "false"
		if allowed {
			a = "true"
		}
		m.permissions.WithLabelValues(by, a).Inc()
		m.permLatency.WithLabelValues(by).Observe(waited.Seconds())
	}
}

// AgentStarted counts an agent process (or built-in agent) started for a session.
func (m *Metrics) AgentStarted(agent string) {
	if m != nil {
		m.agentStarts.WithLabelValues(agent).Inc()
	}
}

// AgentExited counts an agent that ended: stopped by the gateway, or crashed on its own.
func (m *Metrics) AgentExited(agent string, crashed bool) {
	if m != nil {
		how := "stopped"
		if crashed {
			how = "crashed"
		}
		m.agentExits.WithLabelValues(agent, how).Inc()
	}
}

// Request records an HTTP request's duration by route pattern and status code.
func (m *Metrics) Request(route string, code int, d time.Duration) {
	if m != nil {
		m.requestDuration.WithLabelValues(route, itoa(code)).Observe(d.Seconds())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

type sessionsCollector struct {
	fn   func() map[string]int
	desc *prometheus.Desc
}

func (c *sessionsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *sessionsCollector) Collect(ch chan<- prometheus.Metric) {
	for status, n := range c.fn() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), status)
	}
}
