package metrics

import (
	"fmt"
	"math"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// scrape reads the metrics as Prometheus would: the value of each series, by its line's name and labels.
func scrape(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	out := map[string]float64{}
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if line == "" || line[0] == '#' || i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// count is how many series of the metric name got holds.
func count(got map[string]float64, name string) int {
	n := 0
	for k := range got {
		if strings.HasPrefix(k, name+"{") {
			n++
		}
	}
	return n
}

// TestUsageLabelsAreBounded: principals past maxUsagePrincipals count under OtherPrincipal, currencies that are
// not three capital letters or past maxUsageCurrencies under OtherCurrency, and costs that are not finite and
// positive not at all, so neither an OIDC issuer's users nor an agent's made-up currencies grow the series.
func TestUsageLabelsAreBounded(t *testing.T) {
	m := New(nil)
	one := uint64(1)
	for i := range maxUsagePrincipals + 5 {
		m.TurnTokens(fmt.Sprintf("oidc:user%d", i), "demo", Tokens{Input: 2, Output: 1, Total: 3, Thought: &one})
	}
	m.TurnTokens("", "demo", Tokens{Total: 7})
	m.TurnTokens("oidc:user0", "demo", Tokens{Total: 3}) // seen before the bound: still its own
	got := scrape(t, m)
	if n := count(got, "gateway_usage_total_tokens_total"); n != maxUsagePrincipals+2 {
		t.Fatalf("total series: %d, want %d", n, maxUsagePrincipals+2)
	}
	for _, c := range []struct {
		principal string
		want      float64
	}{{OtherPrincipal, 15}, {NoPrincipal, 7}, {"oidc:user0", 6}} {
		if v := got[`gateway_usage_total_tokens_total{agent="demo",principal="`+c.principal+`"}`]; v != c.want {
			t.Errorf("total tokens of %s: %v, want %v", c.principal, v, c.want)
		}
	}
	if v := got[`gateway_usage_tokens_total{agent="demo",kind="thought",principal="_other"}`]; v != 5 {
		t.Errorf("thought tokens of the others: %v", v)
	}

	m = New(nil) // ann is a principal of her own here
	for i := range maxUsageCurrencies + 2 {
		m.Cost("ann", "demo", fmt.Sprintf("C%c%c", 'A'+i, 'A'+i), 1)
	}
	for _, bad := range []string{"usd", "US", "EURO", "€€€", ""} {
		m.Cost("ann", "demo", bad, 0.5)
	}
	for _, ignored := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		m.Cost("ann", "demo", "CAA", ignored)
	}
	got = scrape(t, m)
	if v := got[`gateway_usage_cost_total{agent="demo",currency="CAA",principal="ann"}`]; v != 1 {
		t.Errorf("cost in CAA: %v, want 1", v)
	}
	if v := got[`gateway_usage_cost_total{agent="demo",currency="XXX",principal="ann"}`]; v != 2+5*0.5 {
		t.Errorf("cost in no currency: %v, want 4.5", v)
	}
	if n := count(got, "gateway_usage_cost_total"); n != maxUsageCurrencies+1 {
		t.Errorf("cost series: %d, want %d", n, maxUsageCurrencies+1)
	}
}
