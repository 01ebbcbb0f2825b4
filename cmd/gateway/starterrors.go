package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/store/jsstore"
)

// agentsFileError names the flag and the file an agents file error is about.
func agentsFileError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--agents %s: no such file", path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is already in front
	}
	return fmt.Errorf("--agents %s: %v", path, err)
}

// warnUsersLetNobodyIn warns when the users file admits no one by token and nothing else signs anyone in:
// the gateway would start and answer 401 to every request without saying why.
func warnUsersLetNobodyIn(cfg *config, users *principal.Users, logger *slog.Logger) {
	if users.WithToken() > 0 || cfg.token != "" || cfg.oidcIssuer != "" || cfg.trustedUserHeader != "" {
		return
	}
	logger.Warn("the users file lists no user with a tokenSha256 and no other sign-in is configured: every request will be refused with 401; add a user with the hash of a token (gateway hash-token)",
		"users", cfg.usersFile)
}

// replicasError explains a store that cannot keep --nats-replicas copies because the server is not clustered.
func replicasError(cfg *config, err error) error {
	if !errors.Is(err, jsstore.ErrReplicasUnsupported) {
		return nil
	}
	return fmt.Errorf("--nats-url %s: the NATS server is not part of a JetStream cluster, so it cannot keep --nats-replicas %d copies: pass --nats-replicas 1 to use a single server (the sessions then live on its disk only), or point --nats-url at a JetStream cluster of at least %d servers",
		cfg.natsURL, cfg.natsReplicas, cfg.natsReplicas)
}
