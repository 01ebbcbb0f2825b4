package agentsvc

import (
	"errors"
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

	search := func(q string, b ListBounds) ListResult {
		t.Helper()
		res, err := SearchFiles(roots, q, b)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := search("", ListBounds{MaxScan: 10, MaxDepth: 16, Limit: 100})
	if len(res.Files) != 10 || !res.Truncated {
		t.Fatalf("MaxScan 10: %d entries, truncated %v", len(res.Files), res.Truncated)
	}
	res = search("deep", ListBounds{MaxScan: 1000, MaxDepth: 16, Limit: 100})
	if len(res.Files) != 1 || res.Files[0].Rel != "a/b/c/deep.txt" || res.Truncated {
		t.Fatalf("deep: %+v", res)
	}
	res = search("deep", ListBounds{MaxScan: 1000, MaxDepth: 2, Limit: 100})
	if len(res.Files) != 0 {
		t.Fatalf("MaxDepth 2 went to depth 3: %+v", res)
	}
	res = search("f0", ListBounds{MaxScan: 1000, MaxDepth: 16, Limit: 3})
	if len(res.Files) != 3 || !res.Truncated || res.Files[0].Rel != "f00" {
		t.Fatalf("limit 3: %+v", res)
	}
}

// TestSearchFilesRootClosed: a root that cannot be read (its descriptor closed by a re-attach or a close) is
// an error, not an empty listing.
func TestSearchFilesRootClosed(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	root.Close()
	if res, err := SearchFiles([]ListRoot{{Root: root, Base: dir}}, "", ListBounds{MaxScan: 10, MaxDepth: 2, Limit: 10}); !errors.Is(err, ErrRootUnreadable) {
		t.Fatalf("a closed root: %+v, %v", res, err)
	}
}
