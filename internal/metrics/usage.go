package metrics

import (
	"math"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Bounds on the usage counters' label values. Agent names come from the configuration; principal ids from the
// users file but also from OIDC tokens and a proxy's header, which configuration does not bound, and a currency
// from the agent, which is untrusted: past these bounds usage is still counted, under one catch-all value.
const (
	maxUsagePrincipals = 1000
	maxUsageCurrencies = 8
	// OtherPrincipal labels the usage of principals beyond the first maxUsagePrincipals seen; NoPrincipal a
	// turn nobody prompted (the gateway's own).
	OtherPrincipal = "_other"
	NoPrincipal    = "_none"
	// OtherCurrency is ISO 4217's "no currency": a cost whose currency is not three capital letters, or one
	// beyond the first maxUsageCurrencies seen.
	OtherCurrency = "XXX"
)

// Tokens is one turn's token usage as the agent reported it (ACP's PromptResponse.usage); a nil optional
// count was not reported.
type Tokens struct {
	Input, Output, Total             uint64
	Thought, CachedRead, CachedWrite *uint64
}

// usage holds the per-principal, per-agent spending counters and the label values they have seen.
type usage struct {
	tokens *prometheus.CounterVec // principal, agent, kind
	total  *prometheus.CounterVec // principal, agent
	cost   *prometheus.CounterVec // principal, agent, currency

	mu         sync.Mutex
	principals map[string]struct{} // Guarded by mu; at most maxUsagePrincipals.
	currencies map[string]struct{} // Guarded by mu; at most maxUsageCurrencies.
}

func newUsage() *usage {
	return &usage{
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_usage_tokens_total",
			Help: "Tokens agents reported for turns (PromptResponse.usage), by principal who prompted, agent and kind (input, output, thought, cached_read, cached_write)."},
			[]string{"principal", "agent", "kind"}),
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_usage_total_tokens_total",
			Help: "The totalTokens agents reported for turns, by principal who prompted and agent."},
			[]string{"principal", "agent"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_usage_cost_total",
			Help: "Cost agents reported (what each session's cumulative usage_update cost grew by), by principal, agent and currency."},
			[]string{"principal", "agent", "currency"}),
		principals: map[string]struct{}{},
		currencies: map[string]struct{}{},
	}
}

// principalLabel is id as a label value, within the bound.
func (u *usage) principalLabel(id string) string {
	if id == "" {
		return NoPrincipal
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.principals[id]; ok {
		return id
	}
	if len(u.principals) >= maxUsagePrincipals {
		return OtherPrincipal
	}
	u.principals[id] = struct{}{}
	return id
}

// currencyLabel is c as a label value: an ISO 4217-shaped code within the bound, else OtherCurrency.
func (u *usage) currencyLabel(c string) string {
	if len(c) != 3 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z' || c[2] < 'A' || c[2] > 'Z' {
		return OtherCurrency
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.currencies[c]; ok {
		return c
	}
	if len(u.currencies) >= maxUsageCurrencies {
		return OtherCurrency
	}
	u.currencies[c] = struct{}{}
	return c
}

// TurnTokens adds a turn's token usage to what principal spent on agent.
func (m *Metrics) TurnTokens(principal, agent string, t Tokens) {
	if m == nil {
		return
	}
	p := m.usage.principalLabel(principal)
	add := func(kind string, n *uint64) {
		if n != nil {
			m.usage.tokens.WithLabelValues(p, agent, kind).Add(float64(*n))
		}
	}
	add("input", &t.Input)
	add("output", &t.Output)
	add("thought", t.Thought)
	add("cached_read", t.CachedRead)
	add("cached_write", t.CachedWrite)
	m.usage.total.WithLabelValues(p, agent).Add(float64(t.Total))
}

// Cost adds amount (what a session's reported cost grew by) to what principal spent on agent. Amounts that
// are not finite and positive are ignored.
func (m *Metrics) Cost(principal, agent, currency string, amount float64) {
	if m == nil || !(amount > 0) || math.IsInf(amount, 0) {
		return
	}
	m.usage.cost.WithLabelValues(m.usage.principalLabel(principal), agent, m.usage.currencyLabel(currency)).Add(amount)
}
