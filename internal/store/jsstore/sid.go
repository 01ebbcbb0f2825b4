package jsstore

import (
	"fmt"
	"regexp"
)

// sidPattern is what a session id may be here: one subject token (no '.', '*', '>' or spaces, which would
// name or match other sessions' subjects) and a valid KV key. The gateway's ids are UUIDs.
var sidPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// ErrBadSessionID is returned for a session id that cannot name a log subject or directory key.
var ErrBadSessionID = fmt.Errorf("jsstore: session id must match %s", sidPattern)

func checkSID(sid string) error {
	if !sidPattern.MatchString(sid) {
		return fmt.Errorf("%w: %q", ErrBadSessionID, sid)
	}
	return nil
}
