package main

import (
	"io"
	"os"
	"regexp"
	"slices"
	"testing"
)

// credentialFlags name the files that hold secrets: no agent process may read them (secretPaths).
var credentialFlags = []string{"data-dir", "users", "token-file", "agents", "nats-creds", "nats-tls-key", "tls-key"}

// TestSecretPathsHoldEveryCredentialFile: every flag that names a key, credentials or token file is kept from
// agents, and so is each of credentialFlags; a new flag of that kind fails here until secretPaths has it.
func TestSecretPathsHoldEveryCredentialFile(t *testing.T) {
	src, err := os.ReadFile("config.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`fs\.StringVar\(&c\.\w+, "([a-z-]+(?:-key|-creds|-file))"`).FindAllSubmatch(src, -1) {
		if name := string(m[1]); !slices.Contains(credentialFlags, name) {
			t.Errorf("--%s names a secret file but is not among credentialFlags (and maybe not in secretPaths)", name)
		}
	}
	c, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]*string{"data-dir": &c.dataDir, "users": &c.usersFile, "token-file": &c.tokenFile,
		"agents": &c.agentsFile, "nats-creds": &c.natsCreds, "nats-tls-key": &c.natsTLSKey, "tls-key": &c.tlsKey}
	for _, name := range credentialFlags {
		p, ok := fields[name]
		if !ok {
			t.Fatalf("no config field for --%s in this test", name)
		}
		*p = "/secret/" + name
	}
	for _, name := range credentialFlags {
		if !slices.Contains(c.secretPaths(), "/secret/"+name) {
			t.Errorf("--%s is not among the paths kept from agents: %q", name, c.secretPaths())
		}
	}
}
