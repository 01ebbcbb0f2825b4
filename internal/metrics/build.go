package metrics

import "github.com/prometheus/client_golang/prometheus"

// SetBuildInfo exports gateway_build_info (always 1) labelled with the build, so dashboards and alerts can
// tell which release each instance runs.
func (m *Metrics) SetBuildInfo(version, commit, date, goVersion string) {
	if m == nil {
		return
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "gateway_build_info",
		Help:        "Always 1; the labels say which build is running.",
		ConstLabels: prometheus.Labels{"version": version, "commit": commit, "date": date, "goversion": goVersion},
	})
	g.Set(1)
	m.reg.MustRegister(g)
}
