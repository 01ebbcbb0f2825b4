package agentsvc

import (
	"os"
	"sync"
)

// cwdRoot holds the session's cwd opened as an os.Root, so fs/* keeps to that directory even if its path is
// later swapped for a symlink. NewWorkspace opens it at once, or, for a restored session, Reopen does once the
// session core has checked the stored cwd again.
type cwdRoot struct {
	mu     sync.Mutex
	root   *os.Root // Guarded by mu; nil when none is open.
	closed bool     // Guarded by mu; set by close: nothing is opened again.
}

// get returns the open root (nil when none) and whether close ran.
func (c *cwdRoot) get() (*os.Root, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.root, c.closed
}

// replace makes root the session's, closing the one it had. After close it closes root and reports false.
func (c *cwdRoot) replace(root *os.Root) bool {
	c.mu.Lock()
	old := c.root
	ok := !c.closed
	if ok {
		c.root = root
	}
	c.mu.Unlock()
	if !ok {
		old = root
	}
	if old != nil {
		_ = old.Close()
	}
	return ok
}

// close releases the descriptor for good; fs/* requests after it fail as "cwd gone".
func (c *cwdRoot) close() {
	c.mu.Lock()
	root := c.root
	c.root, c.closed = nil, true
	c.mu.Unlock()
	if root != nil {
		_ = root.Close()
	}
}
