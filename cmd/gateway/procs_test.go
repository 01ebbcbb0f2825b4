package main

import "testing"

func TestRelayProcs(t *testing.T) {
	for _, c := range []struct {
		env       string
		goDefault int
		want      int
	}{
		{"", 2, 1},  // two CPUs: one P, the other is the agents'
		{"", 1, 0},  // already one
		{"", 3, 0},  // more than two: Go's default (not measured there)
		{"", 16, 0}, // …
		{"2", 2, 0}, // the operator's GOMAXPROCS wins
		{"1", 8, 0},
	} {
		getenv := func(k string) string {
			if k == "GOMAXPROCS" {
				return c.env
			}
			return ""
		}
		if got := relayProcs(getenv, c.goDefault); got != c.want {
			t.Errorf("GOMAXPROCS=%q, Go's default %d: got %d, want %d", c.env, c.goDefault, got, c.want)
		}
	}
}
