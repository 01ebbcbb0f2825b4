package agents

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// Values of Spec.Home.
const (
	// HomeIsolated is one HOME of the agent's own, shared by every principal (the operator's choice to share
	// its logins).
	HomeIsolated = "isolated"
	// HomePerPrincipal is a HOME per principal under Spec.HomeRoot, so one principal's login (written there by
	// a terminal login) is never used for another's sessions.
	HomePerPrincipal = "per-principal"
)

// probeHome names the HOME of a per-principal agent's probes; no principal's directory can have this name
// (HomeDirName never starts one with ".").
const probeHome = ".probe"

// HomeDirName is the directory name of a principal's HOME: the id with every byte outside [A-Za-z0-9-]
// written as "_xx" (hex), so distinct ids get distinct names, none of them "." or ".." or holding "/"; "_" for
// the empty id, and "_h" with a hash for ids too long for a file name.
func HomeDirName(id string) string {
	if id == "" {
		return "_"
	}
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
			continue
		}
		b.WriteString("_" + hex.EncodeToString([]byte{c}))
	}
	if b.Len() > 200 {
		sum := sha256.Sum256([]byte(id))
		return "_h" + hex.EncodeToString(sum[:])
	}
	return b.String()
}

// SetHomeRoot makes a per-principal spec's HOMEs live under root/<agent>/ and gives its probes (which run for
// no principal) a HOME of their own there.
func (s *Spec) SetHomeRoot(root string) {
	s.HomeRoot = filepath.Join(root, s.Name)
	s.setHome(filepath.Join(s.HomeRoot, probeHome))
}

// ForPrincipal is the spec as it runs for principal id: with "home": "per-principal", HOME is that
// principal's own directory; any other spec is returned as it is.
func (s Spec) ForPrincipal(id string) Spec {
	if s.Home != HomePerPrincipal || s.HomeRoot == "" {
		return s
	}
	s.setHome(filepath.Join(s.HomeRoot, HomeDirName(id)))
	return s
}

// setHome sets HOME in a copy of the spec's environment (specs share their map).
func (s *Spec) setHome(dir string) {
	env := make(map[string]string, len(s.Env)+1)
	for k, v := range s.Env {
		env[k] = v
	}
	env["HOME"] = dir
	s.Env = env
}

// MakeHome creates the per-principal HOME the spec runs with (0700, parents too), which the first session
// or login of a principal needs; other specs' HOMEs are made at start.
func (s Spec) MakeHome() error {
	if s.Home != HomePerPrincipal || s.Env["HOME"] == "" {
		return nil
	}
	return os.MkdirAll(s.Env["HOME"], 0o700)
}
