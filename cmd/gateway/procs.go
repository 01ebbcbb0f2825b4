package main

import "strconv"

// relayProcs is the GOMAXPROCS the gateway sets for itself at start, or 0 to keep Go's default. The gateway
// relays; the agents it runs do the computing. On a machine of two CPUs, an idle second P spins for work at
// every hand-off between the agent's reader and the clients' writers, on the core the agent needs
// (docs/PERFORMANCE.md, "One P on two cores"). Only that case was measured: a cgroup quota on a larger
// machine (which Go rounds up to two Ps) keeps Go's default, and so does a valid GOMAXPROCS in the
// environment. Setting it stops Go from following later changes of the CPU limit.
func relayProcs(getenv func(string) string, goDefault, numCPU int) int {
	if n, err := strconv.Atoi(getenv("GOMAXPROCS")); err == nil && n > 0 {
		return 0 // the operator's choice, which the runtime has applied
	}
	if goDefault != 2 || numCPU > 2 {
		return 0
	}
	return 1
}
