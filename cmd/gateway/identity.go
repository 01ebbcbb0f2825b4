package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/acp-gateway/gateway/internal/httpapi"
	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/wsticket"
)

// identity is how the gateway identifies callers, built from the configuration; stop releases what it holds
// (the SIGHUP watch, the OIDC client's connections).
type identity struct {
	auth *httpapi.Auth // nil = no authentication
	stop func()
}

// newIdentity builds the Auth of cfg, its WebSocket tickets kept in tickets (nil = in memory). With a users file, SIGHUP reloads it: users removed or changed are
// revoked and their open sockets and streams closed; connections of the others go on.
func newIdentity(cfg *config, logger *slog.Logger, tickets wsticket.Store) (*identity, error) {
	id := &identity{stop: func() {}}
	if !cfg.authenticates() {
		return id, nil
	}
	ac := httpapi.AuthConfig{Token: cfg.token, RPS: cfg.rateLimit, Logger: logger, Tickets: tickets}
	ac.TrustedProxies, _ = principal.ParseProxies(splitList(cfg.trustedProxies)) // checked by parseConfig
	var stops []func()
	id.stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if cfg.usersFile != "" {
		users, err := principal.OpenUsers(cfg.usersFile)
		if err != nil {
			return nil, err
		}
		ac.Users = users
		warnUsersLetNobodyIn(cfg, users, logger)
		stops = append(stops, watchReload(users, logger))
	}
	if cfg.oidcIssuer != "" {
		client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: 10 * time.Second}
		stops = append(stops, client.CloseIdleConnections)
		ctx, cancel := context.WithTimeout(context.Background(), cfg.startTimeout)
		o, err := principal.NewOIDC(ctx, principal.OIDCConfig{
			Issuer: cfg.oidcIssuer, Audience: cfg.oidcAudience, Client: client,
			IDClaim: cfg.oidcIDClaim, NameClaim: cfg.oidcNameClaim, RoleClaim: cfg.oidcRoleClaim,
		})
		cancel()
		if err != nil {
			id.stop()
			return nil, err
		}
		ac.OIDC = o
	}
	if cfg.trustedUserHeader != "" {
		ac.Proxy = &principal.ProxyHeader{Header: cfg.trustedUserHeader, Proxies: ac.TrustedProxies}
	}
	id.auth = httpapi.NewAuth(ac)
	return id, nil
}

// watchReload reloads users on every SIGHUP until the returned stop is called (which waits for the watcher).
func watchReload(users *principal.Users, logger *slog.Logger) (stop func()) {
	return onSIGHUP(func() { reloadUsers(users, logger) })
}

// reloadUsers is what SIGHUP does: a file that does not parse is logged and changes nothing.
func reloadUsers(users *principal.Users, logger *slog.Logger) {
	revoked, err := users.Reload()
	if err != nil {
		logger.Error("users file not reloaded; the previous one stays in force", "err", err)
		return
	}
	logger.Info("users file reloaded", "revoked", revoked)
	for _, name := range revoked {
		principal.Audit(logger, principal.Principal{ID: name, Name: name}, "revoke")
	}
}
