package main

import (
	"context"
	"crypto/x509"
	"errors"
	"io/fs"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/acp-gateway/gateway/internal/store"
)

// A gateway may start before its NATS cluster has formed (docs/cluster.md §5, "Start order"): it retries the
// join with a bounded back-off, for as long as it runs, and is alive but not ready meanwhile.
const (
	joinRetryFirst     = 500 * time.Millisecond // the wait after the first failed attempt; it doubles
	joinRetryMax       = 10 * time.Second       // the longest wait between two attempts
	joinAttemptTimeout = 20 * time.Second       // one attempt: connect, the stream and buckets, their leaders, the join
)

// waitJoin joins the cluster (joinCluster), retrying every failure that waiting can cure until ctx ends.
// Each failed attempt is logged with what it waits for and when it tries again. Errors of configuration (credentials, TLS files, replicas, a node id in use) end it.
func (c *config) waitJoin(ctx context.Context, logger *slog.Logger, advertise string, agentNames []string, state func() store.StoreState) (*clusterStore, error) {
	delay := joinRetryFirst
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, min(joinAttemptTimeout, max(c.startTimeout, connectWait)))
		cs, err := c.joinCluster(actx, logger, advertise, agentNames, state)
		cancel()
		if err == nil {
			if attempt > 1 {
				logger.Info("NATS cluster ready: joined", "attempts", attempt)
			}
			return cs, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !joinRetryable(err) {
			return nil, err
		}
		logger.Warn("waiting for the NATS cluster", "waiting_for", "a JetStream meta leader, the log stream and the buckets",
			"attempt", attempt, "err", err.Error(), "retry_in", delay.String())
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, joinRetryMax)
	}
}

// connectWait is the shortest attempt: enough for a TCP connect and a JetStream round trip.
const connectWait = 5 * time.Second

// joinRetryable reports whether err can pass by waiting (no server up yet, no meta leader, no stream leader,
// a request that timed out) rather than by changing the configuration.
func joinRetryable(err error) bool {
	var (
		pathErr  *fs.PathError
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		hostname x509.HostnameError
	)
	switch {
	case errors.As(err, new(joinConfigError)), errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAuthRevoked),
		errors.Is(err, nats.ErrAccountAuthExpired), errors.As(err, &pathErr),
		errors.As(err, &unknown), errors.As(err, &invalid), errors.As(err, &hostname):
		return false
	}
	return true
}

// joinConfigError is a join failure that only a change of the flags cures (replicas, a node id in use).
type joinConfigError struct{ error }

func (e joinConfigError) Unwrap() error { return e.error }
