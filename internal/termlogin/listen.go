package termlogin

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ListensOn reports whether a process of the login (its session: the command and what it started without
// leaving it) listens on TCP port of the loopback address (or of every address). It reads /proc: the
// listening sockets of /proc/net/tcp{,6} and the socket inodes among those processes' descriptors, so only
// a port the login itself opened is ever reached through the gateway, never another program's.
func (l *Login) ListensOn(port int) bool {
	select {
	case <-l.done:
		return false
	default:
	}
	inodes := listeningInodes(port)
	if len(inodes) == 0 {
		return false
	}
	for _, pid := range sessionPids(l.pid) {
		fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name()))
			if err == nil && strings.HasPrefix(target, "socket:[") && inodes[strings.TrimSuffix(target[len("socket:["):], "]")] {
				return true
			}
		}
	}
	return false
}

// sessionPids are the processes whose session id is sid.
func sessionPids(sid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // f[0] is field 3 (state); the session id is field 6
		if len(f) > 3 && f[3] == strconv.Itoa(sid) {
			out = append(out, pid)
		}
	}
	return out
}

// listeningInodes are the inodes of the TCP sockets listening on port of a loopback or wildcard address.
func listeningInodes(port int) map[string]bool {
	want := strings.ToUpper(strconv.FormatInt(int64(port), 16))
	for len(want) < 4 {
		want = "0" + want
	}
	out := map[string]bool{}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			addr, p, ok := strings.Cut(fields[1], ":")
			if ok && p == want && loopbackOrAny(addr) {
				out[fields[9]] = true
			}
		}
		f.Close()
	}
	return out
}

// loopbackOrAny reports whether a /proc/net/tcp{,6} local address (hex, host byte order per 32-bit word) is
// 127.0.0.1, ::1, ::ffff:127.0.0.1 or a wildcard.
func loopbackOrAny(hex string) bool {
	switch hex {
	case "0100007F", "00000000",
		"00000000000000000000000001000000", "00000000000000000000000000000000",
		"0000000000000000FFFF00000100007F":
		return true
	}
	return false
}
