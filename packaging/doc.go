// Package packaging holds the release packaging (the nfpm configuration, the systemd unit, the service's
// environment file) and the tests that build a release artifact with scripts/release.sh and run it.
package packaging
