package agents

import (
	"strings"
	"testing"
)

func TestHomeDirNameIsSafe(t *testing.T) {
	seen := map[string]string{}
	long := strings.Repeat("x/", 200)
	for _, id := range []string{"", "_", "ann", "Ann", "..", ".", "a/b", "a_2fb", "https://issuer|sub", "ann@example.com", long, long + "y"} {
		n := HomeDirName(id)
		if n == "" || n == "." || n == ".." || strings.Contains(n, "/") || n[0] == '.' || len(n) > 200 {
			t.Errorf("%q -> unsafe name %q", id, n)
		}
		if prev, ok := seen[n]; ok {
			t.Errorf("%q and %q share the name %q", prev, id, n)
		}
		seen[n] = id
	}
}

func TestForPrincipalGivesEachPrincipalAHome(t *testing.T) {
	s := Spec{Name: "a", Kind: KindACP, Command: "x", Home: HomePerPrincipal, Env: map[string]string{"K": "v"}}
	s.SetHomeRoot("/r")
	if got := s.Env["HOME"]; got != "/r/a/.probe" {
		t.Errorf("probe HOME = %q", got)
	}
	a, b := s.ForPrincipal("ann"), s.ForPrincipal("bob")
	if a.Env["HOME"] != "/r/a/ann" || b.Env["HOME"] != "/r/a/bob" || a.Env["K"] != "v" {
		t.Errorf("HOMEs %q %q, env %v", a.Env["HOME"], b.Env["HOME"], a.Env)
	}
	if s.Env["HOME"] != "/r/a/.probe" {
		t.Error("ForPrincipal changed the shared spec's env")
	}
	iso := Spec{Name: "i", Home: HomeIsolated, Env: map[string]string{"HOME": "/r/i"}}
	if iso.ForPrincipal("ann").Env["HOME"] != "/r/i" {
		t.Error("an isolated HOME must stay shared")
	}
}
