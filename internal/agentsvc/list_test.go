package agentsvc

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func openRoot(t *testing.T, dir string) *os.Root {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestSearchFilesBounds: a listing reads at most MaxScan entries and opens at most MaxDepth levels, and says
// it was cut short.
func TestSearchFilesBounds(t *testing.T) {
	dir := t.TempDir()
	for i := range 30 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "c", "deep.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	roots := []ListRoot{{Root: openRoot(t, dir), Base: dir}}

	res := SearchFiles(roots, "", ListBounds{MaxScan: 10, MaxDepth: 16, Limit: 100})
	if len(res.Files) != 10 || !res.Truncated {
		t.Fatalf("MaxScan 10: %d entries, truncated %v", len(res.Files), res.Truncated)
	}
	res = SearchFiles(roots, "deep", ListBounds{MaxScan: 1000, MaxDepth: 16, Limit: 100})
	if len(res.Files) != 1 || res.Files[0].Rel != "a/b/c/deep.txt" || res.Truncated {
		t.Fatalf("deep: %+v", res)
	}
	res = SearchFiles(roots, "deep", ListBounds{MaxScan: 1000, MaxDepth: 2, Limit: 100})
	if len(res.Files) != 0 {
		t.Fatalf("MaxDepth 2 went to depth 3: %+v", res)
	}
	res = SearchFiles(roots, "f0", ListBounds{MaxScan: 1000, MaxDepth: 16, Limit: 3})
	if len(res.Files) != 3 || !res.Truncated || res.Files[0].Rel != "f00" {
		t.Fatalf("limit 3: %+v", res)
	}
}
