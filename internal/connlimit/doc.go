// Package connlimit holds the HTTP listener's connection accounting: the cap on unauthenticated connections,
// the per-user cap, and shedding idle keep-alives near the descriptor limit, so a flood of sockets cannot
// starve clients with work to do.
package connlimit
