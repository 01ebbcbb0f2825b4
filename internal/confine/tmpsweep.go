package confine

import (
	"os"
	"path/filepath"
	"strings"
)

// tmpPrefix starts the name of every private TMPDIR: tmpPrefix + owner + "-" + random.
const tmpPrefix = "acp-gateway-tmp-"

// SweepTmp removes the private TMPDIRs under root whose owner (Options.Owner) alive says no longer runs:
// a gateway killed with SIGKILL cannot remove its processes' ones. It returns how many it removed.
func SweepTmp(root string, alive func(owner string) bool) int {
	if root == "" {
		root = os.TempDir()
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tmpPrefix)
		i := strings.LastIndexByte(rest, '-')
		if !ok || !e.IsDir() || i <= 0 || alive(rest[:i]) {
			continue
		}
		if os.RemoveAll(filepath.Join(root, e.Name())) == nil {
			removed++
		}
	}
	return removed
}
