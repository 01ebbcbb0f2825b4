package fold

// maxCostCurrencies bounds the currencies a session remembers a cost in.
const maxCostCurrencies = 8

// Costs are the cumulative costs the agent last reported, by currency.
type Costs struct {
	seen map[string]float64
}

// Growth is how much the cost in currency grew since the last report of it, and records amount as the
// latest. The cost is cumulative per session: an amount below the last one means the agent started counting
// again (a new agent process), and all of it is new.
func (c *Costs) Growth(currency string, amount float64) float64 {
	if c.seen == nil {
		c.seen = map[string]float64{}
	}
	last, seen := c.seen[currency]
	if len(c.seen) >= maxCostCurrencies && !seen {
		return 0 // an agent that invents currencies gets no more entries, and no more counted cost
	}
	c.seen[currency] = amount
	if amount >= last {
		return amount - last
	}
	return amount
}
