package inproc

import (
	"testing"

	"go.uber.org/goleak"
)

// Serve starts the SDK's goroutines; every test must leave none behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
