package main

import (
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// nobodyUID is the user the test runs the gateway as: not the owner of the directories root makes.
const nobodyUID = 65534

// TestDataDirOwnedByAnotherUser: a gateway running as one user on a --data-dir another user owns (root's,
// say, made with sudo mkdir) cannot keep it 0700; the error says so and what to do, not just "chmod …
// operation not permitted".
func TestDataDirOwnedByAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test makes a directory root owns and runs the gateway as uid 65534 on it")
	}
	// Everything the unprivileged gateway needs must be reachable by it: t.TempDir's parent is 0700.
	base, err := os.MkdirTemp("", "gateway-owner-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "gateway.test")
	copyExecutable(t, os.Args[0], bin)
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(work, 0o777); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(base, "data")
	if err := os.Mkdir(data, 0o755); err != nil { // root's, as `sudo mkdir` leaves it
		t.Fatal(err)
	}

	nobody := &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}
	who := strconv.Itoa(nobodyUID)
	if u, err := user.LookupId(who); err == nil {
		who = u.Username
	}
	want := "gateway: --data-dir " + data + " is owned by " + userName(0) + ", but the gateway runs as " + userName(nobodyUID) +
		": it keeps the directory 0700 (it holds every transcript and the secrets of MCP servers) and must own it to do so; give it to that user (chown -R " +
		who + " " + data + ") or choose a directory that user owns"
	checkLastLine(t, bin, nobody, work, want, "--addr", "127.0.0.1:0", "--workdir", work, "--data-dir", data)

	// A data dir to create in a directory the user may not write.
	inRoots := filepath.Join(data, "sub")
	want = "gateway: --data-dir " + inRoots + ": the gateway runs as " + userName(nobodyUID) + ", who may not create it in " + data +
		"; create it for that user (install -d -o " + who + " -m 0700 " + inRoots + ") or choose a directory that user can write"
	checkLastLine(t, bin, nobody, work, want, "--addr", "127.0.0.1:0", "--workdir", work, "--data-dir", inRoots)
}

// checkLastLine runs the gateway process and checks it exits 1 with want as the last line of its stderr.
func checkLastLine(t *testing.T, bin string, cred *syscall.Credential, dir, want string, args ...string) {
	t.Helper()
	out, code := runChildOnce(t, bin, cred, dir, args...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; code != 1 || last != want {
		t.Errorf("exit %d, last line %q\nwant exit 1, %q\n(all of stderr: %s)", code, last, want, out)
	}
}

// userName is how the gateway names a uid in errors: the user name and the uid, or the uid alone.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username + " (uid " + strconv.Itoa(uid) + ")"
	}
	return "uid " + strconv.Itoa(uid)
}

// copyExecutable copies the file from to the new file to with mode 0755.
func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
