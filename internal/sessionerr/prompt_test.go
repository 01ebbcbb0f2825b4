package sessionerr

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckIdempotencyKey(t *testing.T) {
	for _, ok := range []string{"a", "550e8400-e29b-41d4-a716-446655440000", "with space ~", strings.Repeat("k", MaxIdempotencyKeyLen)} {
		if err := CheckIdempotencyKey(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("k", MaxIdempotencyKeyLen+1), "tab\there", "ключ", "nul\x00"} {
		if err := CheckIdempotencyKey(bad); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%q: %v, want ErrBadRequest", bad, err)
		}
	}
}
