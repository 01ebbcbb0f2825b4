package agenterr

import (
	"strings"
	"testing"
)

// TestStderrTailRedactsBeforeCutting: a secret whose marker (a PEM header, "Bearer") lies before the cut is
// still redacted in the tail shown to clients: the whole stderr is redacted first, then cut.
func TestStderrTailRedactsBeforeCutting(t *testing.T) {
	body := strings.Repeat("MIIEowIBAAKCAQEAx1a2b3c4d5e6f7g8h9i0j", 100) // ~3.7 KiB of key material
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----\n"
	bearer := "Authorization: Bearer " + strings.Repeat("tok3nTOK3Ntok3n", 200) + "\n"
	for name, stderr := range map[string]string{
		"pem":    "starting\n" + pem + "fatal: no credentials\n",
		"bearer": "starting\n" + bearer + "fatal: no credentials\n",
	} {
		got := StderrTail(stderr)
		if strings.Contains(got, "MIIEowIBAAKCAQEA") || strings.Contains(got, "tok3nTOK3N") {
			t.Errorf("%s: the tail shows the secret: %.120q", name, got)
		}
		if !strings.Contains(got, "fatal: no credentials") || len(got) > MaxData {
			t.Errorf("%s: tail %d bytes lacks the last line: %.120q", name, len(got), got)
		}
	}
}
