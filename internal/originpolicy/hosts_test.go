package originpolicy

import "testing"

// TestHostPolicy covers the spellings of loopback names and the pattern rules without a live server.
func TestHostPolicy(t *testing.T) {
	p := Hosts{Restrict: true, ListenHost: "192.168.1.5", Patterns: []string{"gateway.lan", "*.corp.example:8443"}}
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:8080": true, "localhost.:8080": true, "app.localhost:1": true,
		"127.0.0.1:8080": true, "127.9.9.9": true, "[::1]:8080": true, "[::1]": true,
		"192.168.1.5:8080": true, "gateway.lan": true, "gateway.lan:9000": true, "a.corp.example:8443": true,
		"a.corp.example:80": false, "corp.example:8443": false, "localhost.attacker.example": false,
		"127.0.0.1.nip.io": false, "attacker.example:8080": false, "": false, "[::2]:8080": false,
		"192.168.1.6": false,
	} {
		if got := p.Allows(host); got != want {
			t.Errorf("Allows(%q) = %v, want %v", host, got, want)
		}
	}
	if !(Hosts{}).Allows("anything.example") {
		t.Error("an unrestricted policy refused a host")
	}
}
