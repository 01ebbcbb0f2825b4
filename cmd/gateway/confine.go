package main

import (
	"fmt"
	"log/slog"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/confine"
)

// Values of --confine.
const (
	confineAuto     = "auto"     // Landlock when the kernel has it, else a warning
	confineLandlock = "landlock" // Landlock or no start
	confineOff      = "off"
)

// confiner builds what --confine asks for and says at start which confinement is active. It also takes the
// gateway's secrets out of its /proc environ and kills what an earlier gateway process left running.
func (c *config) confiner(logger *slog.Logger) (*confine.Confiner, error) {
	if err := confine.ScrubEnviron(); err != nil {
		logger.Warn("cannot clear the start-up environment from /proc/self/environ; processes of the gateway's uid may read it", "err", err)
	}
	if n := agents.SweepOrphans(); n > 0 {
		logger.Warn("killed processes an earlier gateway process left running", "count", n)
	}
	if n := confine.SweepTmp("", agents.OwnerAlive); n > 0 {
		logger.Info("removed private TMPDIRs an earlier gateway process left", "count", n)
	}
	if c.confine == confineOff {
		logger.Warn("confinement: off (--confine off); agents, their terminals and MCP servers can read and write whatever the gateway can")
		return nil, nil
	}
	cf, err := confine.New(confine.Options{Secrets: c.secretPaths(), Shared: c.sharedDirs(), Owner: agents.OwnerID()})
	if err != nil {
		if c.confine == confineLandlock {
			return nil, fmt.Errorf("--confine landlock: %v", err)
		}
		logger.Warn("confinement: unavailable; agents, their terminals and MCP servers can read and write whatever the gateway can", "reason", err)
		return nil, nil
	}
	logger.Info("confinement: landlock", "abi", cf.ABI())
	return cf, nil
}

// secretPaths are the gateway's files no agent process may read, wherever they lie.
func (c *config) secretPaths() []string {
	return []string{c.dataDir, c.usersFile, c.tokenFile, c.agentsFile, c.natsCreds, c.natsTLSKey, c.tlsKey}
}

// sharedDirs hold several sessions' directories or several agents' HOMEs: a process gets only its own.
func (c *config) sharedDirs() []string {
	roots := c.workspaceRoots
	if len(roots) == 0 {
		roots = []string{c.workdir}
	}
	return append(append([]string(nil), roots...), c.homeRoot)
}
