package main

import "testing"

func TestRelayProcs(t *testing.T) {
	for _, c := range []struct {
		env               string
		goDefault, numCPU int
		want              int
	}{
		{"", 2, 2, 1},    // two CPUs: one P, the other is the agents'
		{"", 1, 1, 0},    // already one
		{"", 3, 3, 0},    // more than two: Go's default (not measured there)
		{"", 2, 64, 0},   // a quota of ≤ 2 CPUs on a large machine: not measured, Go's default
		{"2", 2, 2, 0},   // the operator's GOMAXPROCS wins
		{"1", 8, 8, 0},   // …
		{"abc", 2, 2, 1}, // a GOMAXPROCS the runtime ignores is no choice
		{"0", 2, 2, 1},
	} {
		getenv := func(k string) string {
			if k == "GOMAXPROCS" {
				return c.env
			}
			return ""
		}
		if got := relayProcs(getenv, c.goDefault, c.numCPU); got != c.want {
			t.Errorf("GOMAXPROCS=%q, Go's default %d, %d CPUs: got %d, want %d", c.env, c.goDefault, c.numCPU, got, c.want)
		}
	}
}
