package jsstore_test

import (
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// natsCluster is a real 3-node nats-server cluster on loopback ports (natstest.StartCluster).
type natsCluster struct {
	urls []string // client URL of each server
}

func startNATSCluster(t testing.TB) *natsCluster {
	t.Helper()
	return &natsCluster{urls: natstest.StartCluster(t, 3).URLs}
}

func poll(t testing.TB, what string, interval time.Duration, cond func() bool) {
	t.Helper()
	natstest.Poll(t, what, interval, cond)
}
