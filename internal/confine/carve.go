package confine

import (
	"os"
	"path/filepath"
	"strings"
)

// carveDepth bounds how deep carve descends towards a protected path; what lies deeper is not granted.
const carveDepth = 12

// resolve makes p absolute with its symlinks followed, as Landlock sees it (a rule holds the inode the path
// leads to). ok is false for a path that does not exist.
func resolve(p string) (string, bool) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", false
	}
	return r, true
}

// resolveAll resolves the paths of list; for a missing one (a data dir created after start) its nearest
// existing ancestor is resolved and the rest appended, so it is recognised where it will be.
func resolveAll(list []string) []string {
	out := make([]string, 0, len(list))
	for _, p := range list {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		rest := ""
		for {
			if r, ok := resolve(abs); ok {
				out = append(out, filepath.Join(r, rest))
				break
			}
			parent := filepath.Dir(abs)
			if parent == abs {
				out = append(out, filepath.Join(abs, rest))
				break
			}
			rest = filepath.Join(filepath.Base(abs), rest)
			abs = parent
		}
	}
	return out
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// carve returns what of the resolved path p may be granted. Landlock grants whole hierarchies and cannot
// except a part of one, so a directory that holds a protected path is replaced by its entries, each carved in
// turn: everything beside the protected paths stays usable, the protected ones are left out. A path equal to
// or inside a secret gives nothing; one inside a shared root is granted (a session's own cwd lies in a
// workspace root). Symlinks among the entries are left out: their targets are granted where they lie.
func carve(p string, secrets, shared []string, depth int) (dirs, files []string) {
	for _, s := range secrets {
		if within(p, s) {
			return nil, nil
		}
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, nil
	}
	if !fi.IsDir() {
		return nil, []string{p}
	}
	if !holdsAny(p, secrets) && !holdsAny(p, shared) {
		return []string{p}, nil
	}
	if depth >= carveDepth {
		return nil, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, nil
	}
	for _, e := range entries {
		child := filepath.Join(p, e.Name())
		if e.Type()&os.ModeSymlink != 0 || isAny(child, shared) {
			continue
		}
		d, f := carve(child, secrets, shared, depth+1)
		dirs, files = append(dirs, d...), append(files, f...)
	}
	return dirs, files
}

// holdsAny reports whether one of list lies strictly below dir.
func holdsAny(dir string, list []string) bool {
	for _, p := range list {
		if p != dir && within(p, dir) {
			return true
		}
	}
	return false
}

func isAny(p string, list []string) bool {
	for _, q := range list {
		if p == q {
			return true
		}
	}
	return false
}
