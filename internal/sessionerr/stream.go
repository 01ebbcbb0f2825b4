package sessionerr

import (
	"errors"
	"fmt"
)

// Errors that end a Follow.
var (
	ErrSessionClosed = errors.New("session closed")
	// ErrShutdown is ErrSessionClosed when the gateway's shutdown closed the session: faces close with 1001
	// ("come back later") rather than "session closed", once the subscriber has every frame that says why.
	ErrShutdown = fmt.Errorf("%w by the gateway's shutdown", ErrSessionClosed)
)

// ErrLost ends a subscriber's stream when its principal may no longer see the session (its share ended): to
// them the session now does not exist.
var ErrLost = fmt.Errorf("%w: no longer shared with the subscriber", ErrNotFound)

// ErrStoodDown ends the streams of a session this node stood down: another node took it over while this one
// was cut off. It is an ErrShutdown, so faces that do not look for it end as for a gateway going away; session
// WebSockets close with 1012 "session moved". Clients reconnect and the session is served from the stored log.
var ErrStoodDown = fmt.Errorf("%w: the session was taken over while this node was cut off", ErrShutdown)
