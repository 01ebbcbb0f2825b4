package termlogin

import (
	"net"
	"testing"
)

// startOtherListener listens on a loopback port in the test process itself: a port no login owns.
func startOtherListener(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}
