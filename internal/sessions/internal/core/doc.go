// Package core is the session core: one Session's state under one lock (its log, the running turn, what its
// frames decide, cold and copy state) and the API the faces use. What has state or logic of its own without
// the session lives in the packages beside it (fold, agentlink, turns, pending, services, stream, access,
// cold, …), which reach the session through small interfaces. Where the session runs is left to its Runner,
// and what it needs of the registry to its Host; the role code in package sessions implements both and
// changes a session through Control, which only the packages under internal/sessions can name.
package core
