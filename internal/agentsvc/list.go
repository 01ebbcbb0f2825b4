package agentsvc

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// File listing for people who mention files in a prompt (GET /v1/sessions/{id}/files). It walks a root
// through os.Root, so nothing outside it is read: directories are opened relative to their parent with
// O_DIRECTORY|O_NONBLOCK (a FIFO swapped in fails instead of blocking), nothing else is opened at all, and
// a symlink is listed only when it resolves inside the root to a regular file (never followed into a
// directory, so a link loop or a link out costs nothing).

// FileEntry is one regular file or directory a listing found.
type FileEntry struct {
	Path string `json:"path"` // absolute, under its root
	Rel  string `json:"rel"`  // relative to the root it was found under, slash-separated
	Type string `json:"type"` // "file" or "dir"
}

// ListBounds bound one listing: entries looked at, directory depth, and entries returned.
type ListBounds struct {
	MaxScan  int // directory entries read in all, across roots
	MaxDepth int // directories below a root that are opened
	Limit    int // entries returned
}

// SkippedDirs are directory names a listing neither returns nor enters: they are large and never what a
// person mentions.
var SkippedDirs = []string{".git", "node_modules"}

// ListRoot is one directory a listing walks: Root opened at Base (an absolute path).
type ListRoot struct {
	Root *os.Root
	Base string
}

// ListResult is the best matches, best first, and whether the bounds cut the walk short.
type ListResult struct {
	Files     []FileEntry `json:"files"`
	Truncated bool        `json:"truncated"`
}

type match struct {
	e     FileEntry
	score int // lower is better
	depth int
}

// ErrRootUnreadable is a root whose own directory cannot be opened (its descriptor was closed, say).
var ErrRootUnreadable = errors.New("the directory cannot be read")

// SearchFiles walks roots breadth first, in order, and returns the entries whose relative path contains q
// (case-insensitive; "" matches all), ranked: basename equal to q, basename starting with q, basename
// containing q, then the path containing q; shallower and shorter first within a rank. A directory below a
// root that cannot be read is skipped; a root that cannot be read is an error naming its Base.
func SearchFiles(roots []ListRoot, q string, b ListBounds) (ListResult, error) {
	q = strings.ToLower(q)
	var found []match
	scanned := 0
	cut := false
	for _, r := range roots {
		stop, err := walkRoot(r, q, b, &scanned, &found)
		if err != nil {
			return ListResult{}, fmt.Errorf("%s: %w", r.Base, err)
		}
		if stop {
			cut = true
			break
		}
	}
	slices.SortStableFunc(found, func(x, y match) int {
		return cmp.Or(cmp.Compare(x.score, y.score), cmp.Compare(x.depth, y.depth), cmp.Compare(len(x.e.Rel), len(y.e.Rel)), strings.Compare(x.e.Rel, y.e.Rel))
	})
	if len(found) > b.Limit {
		found, cut = found[:b.Limit], true
	}
	out := ListResult{Files: make([]FileEntry, len(found)), Truncated: cut}
	for i, m := range found {
		out.Files[i] = m.e
	}
	return out, nil
}

// walkRoot adds r's matches to found and reports whether MaxScan stopped it.
func walkRoot(r ListRoot, q string, b ListBounds, scanned *int, found *[]match) (bool, error) {
	type dir struct {
		rel   string
		depth int
	}
	queue := []dir{{".", 0}}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		names, stop, err := readDir(r.Root, d.rel, b.MaxScan-*scanned)
		if err != nil && d.rel == "." {
			return false, ErrRootUnreadable
		}
		*scanned += len(names)
		for _, de := range names {
			rel := path.Join(d.rel, de.Name())
			var typ string
			switch t := de.Type(); {
			case t.IsDir():
				if slices.Contains(SkippedDirs, de.Name()) {
					continue
				}
				typ = "dir"
				if d.depth+1 < b.MaxDepth {
					queue = append(queue, dir{rel, d.depth + 1})
				}
			case t.IsRegular():
				typ = "file"
			case t&fs.ModeSymlink != 0:
				// os.Root follows the link only while it stays inside; a link out (or dangling) errs.
				fi, err := r.Root.Stat(rel)
				if err != nil || !fi.Mode().IsRegular() {
					continue
				}
				typ = "file"
			default:
				continue // FIFOs, sockets, devices
			}
			if score, ok := rank(rel, de.Name(), q); ok {
				*found = append(*found, match{FileEntry{Path: filepath.Join(r.Base, filepath.FromSlash(rel)), Rel: rel, Type: typ}, score, d.depth})
			}
		}
		if stop {
			return true, nil
		}
	}
	return false, nil
}

// readDir reads at most max entries of the directory rel, opened inside root as a directory only, and
// reports whether max cut it short, or why it could not be opened.
func readDir(root *os.Root, rel string, max int) ([]fs.DirEntry, bool, error) {
	if max <= 0 {
		return nil, true, nil
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	names, err := f.ReadDir(max)
	if err != nil && !errors.Is(err, io.EOF) {
		return names, false, nil // what was read before the error is listed
	}
	if len(names) < max {
		return names, false, nil
	}
	more, _ := f.ReadDir(1)
	return names, len(more) > 0, nil
}

// rank scores rel against q (lower is better) and reports whether it matches at all.
func rank(rel, name, q string) (int, bool) {
	if q == "" {
		return 0, true
	}
	name = strings.ToLower(name)
	switch {
	case name == q:
		return 0, true
	case strings.HasPrefix(name, q):
		return 1, true
	case strings.Contains(name, q):
		return 2, true
	case strings.Contains(strings.ToLower(rel), q):
		return 3, true
	}
	return 0, false
}

// RootForList is the workspace's open cwd root for a listing, nil when none is open (a restored session
// not re-attached yet: the caller opens and checks the cwd itself), and whether the workspace was closed.
func (w *Workspace) RootForList() (*os.Root, bool) { return w.root.get() }
