package principal_test

import (
	"net/http/httptest"
	"testing"

	"github.com/acp-gateway/gateway/internal/principal"
)

func TestProxyHeaderOnlyFromTrustedAddresses(t *testing.T) {
	nets, err := principal.ParseProxies([]string{"10.0.0.0/8", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	h := &principal.ProxyHeader{Header: "X-Forwarded-User", Proxies: nets}
	for _, tc := range []struct {
		remote, value    string
		present, trusted bool
	}{
		{"10.1.2.3:5000", "ann", true, true},
		{"[::1]:5000", "ann", true, true},
		{"[::ffff:10.0.0.1]:5000", "ann", true, true},
		{"192.168.1.1:5000", "ann", true, false},
		{"127.0.0.1:5000", "ann", true, false},
		{"10.1.2.3:5000", "", false, false},
		{"10.1.2.3:5000", "a b", true, false},
		{"10.1.2.3:5000", "oidc:alice", true, false}, // another source's id
		{"10.1.2.3:5000", "corp:ann", true, false},   // ids with ':' belong to prefixed sources
		{"10.1.2.3:5000", "admin", true, false},      // the single token's admin
		{"10.1.2.3:5000", "anonymous", true, false},  // the unauthenticated caller
		{"10.1.2.3:5000", "ann@example.com", true, true},
	} {
		r := httptest.NewRequest("GET", "/v1/sessions", nil)
		r.RemoteAddr = tc.remote
		if tc.value != "" {
			r.Header.Set("X-Forwarded-User", tc.value)
		}
		name, present, refused := h.Name(r)
		trusted := present && refused == nil
		if present != tc.present || trusted != tc.trusted || trusted && name != tc.value {
			t.Errorf("%s %q: name %q present %v trusted %v", tc.remote, tc.value, name, present, trusted)
		}
	}
	if _, err := principal.ParseProxies([]string{"not-an-address"}); err == nil {
		t.Fatal("a bad CIDR parsed")
	}
}
