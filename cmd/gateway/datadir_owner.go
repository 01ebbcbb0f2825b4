package main

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// dataDirPermError explains a --data-dir the gateway's user may not create or keep 0700: the bare "chmod …
// operation not permitted" does not say that the directory belongs to someone else, nor what to do.
func dataDirPermError(dir string, err error) error {
	me := os.Geteuid()
	switch {
	case errors.Is(err, syscall.EPERM):
		if owner, ok := ownerOf(dir); ok && owner != me {
			return fmt.Errorf("--data-dir %s is owned by %s, but the gateway runs as %s: it keeps the directory 0700 (it holds every transcript and the secrets of MCP servers) and must own it to do so; give it to that user (chown -R %s %s) or choose a directory that user owns",
				dir, describeUID(owner), describeUID(me), chownName(me), dir)
		}
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("--data-dir %s: the gateway runs as %s, who may not create it in %s; create it for that user (install -d -o %s -m 0700 %s) or choose a directory that user can write",
			dir, describeUID(me), filepath.Dir(dir), chownName(me), dir)
	}
	return fmt.Errorf("--data-dir: %v", err)
}

// ownerOf returns the uid that owns path.
func ownerOf(path string) (int, bool) {
	info, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// describeUID names a uid for people: "nobody (uid 65534)", or "uid 1234" when no user has it.
func describeUID(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username + " (uid " + strconv.Itoa(uid) + ")"
	}
	return "uid " + strconv.Itoa(uid)
}

// chownName is the uid as chown and install take it: the user name, or the number when no user has it.
func chownName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}
