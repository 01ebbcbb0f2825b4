// Package core is the session core: one Session's state (its log, turn, permission requests, status and
// shares) and the API the faces use. Where the session runs is left to its Runner, and what it needs of the
// registry to its Host; the role code in package sessions implements both and changes a session through
// Control, which only the packages under internal/sessions can name.
package core
