package main

// relayProcs is the GOMAXPROCS the gateway sets for itself at start, or 0 to keep Go's default. The gateway
// relays; the agents it runs do the computing. Where Go may use at most two CPUs, an idle second P spins for
// work at every hand-off between the agent's reader and the clients' writers, on the core the agent needs
// (docs/PERFORMANCE.md, "One P on two cores"). GOMAXPROCS in the environment always wins.
func relayProcs(getenv func(string) string, goDefault int) int {
	if getenv("GOMAXPROCS") != "" || goDefault > 2 || goDefault <= 1 {
		return 0
	}
	return 1
}
