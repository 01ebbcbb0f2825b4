package sessionerr

import (
	"errors"
	"testing"
)

// FuzzCheckIdempotencyKey feeds arbitrary keys to the check: it accepts exactly 1 to MaxIdempotencyKeyLen
// bytes of printable ASCII (what an HTTP header carries as is) and refuses anything else with ErrBadRequest.
func FuzzCheckIdempotencyKey(f *testing.F) {
	f.Add("6f1c2d3e-0000-4000-8000-123456789abc")
	f.Add("")
	f.Add(" ")
	f.Add("tab\tkey")
	f.Add("crlf\r\nX-Injected: 1")
	f.Add("nul\x00")
	f.Add("del\x7f")
	f.Add("ключ")
	f.Add(string(make([]byte, MaxIdempotencyKeyLen+1)))
	f.Fuzz(func(t *testing.T, key string) {
		err := CheckIdempotencyKey(key)
		want := len(key) >= 1 && len(key) <= MaxIdempotencyKeyLen
		for i := 0; i < len(key); i++ {
			if key[i] < 0x20 || key[i] > 0x7e {
				want = false
			}
		}
		if (err == nil) != want {
			t.Fatalf("key %q: err %v, want accepted=%v", key, err, want)
		}
		if err != nil && !errors.Is(err, ErrBadRequest) {
			t.Fatalf("error %v is not ErrBadRequest", err)
		}
	})
}
