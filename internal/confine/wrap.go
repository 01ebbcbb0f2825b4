package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// systemReadDirs are read and executed by any program: binaries, libraries, configuration, /proc and /sys.
// Landlock keeps a confined process from another domain's /proc entries (environ, fds, cwd, memory) whatever
// the file modes say, so /proc is safe to list.
var systemReadDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/proc", "/sys", "/run/systemd/resolve", "/run/resolvconf", "/nix/store"}

// devices are the device files programs expect to open; ttys for programs that want one.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
	"/dev/ptmx", "/dev/pts"}

// Extra is what an agent's entry in the agents file adds to what its processes may use: absolute paths,
// read (and execute) or read-write.
type Extra struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
}

// Check refuses relative paths: what they would name depends on each session's cwd.
func (e Extra) Check() error {
	for _, p := range append(append([]string(nil), e.Read...), e.Write...) {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("confine path %q is not absolute", p)
		}
	}
	return nil
}

// Options configures a Confiner.
type Options struct {
	// Secrets are never readable by a confined process, wherever they lie: the data dir, the users, token,
	// agents and credential files.
	Secrets []string
	// Shared are directories whose insides belong to several sessions (workspace roots, the parent of isolated
	// HOMEs): a process gets its own cwd and HOME inside them, never the rest.
	Shared []string
	// TmpRoot is where each confined process gets a private TMPDIR; "" = os.TempDir().
	TmpRoot string
}

// Confiner prepares commands to run confined. A nil *Confiner confines nothing.
type Confiner struct {
	// Static after construction.
	abi     int
	secrets []string
	shared  []string
	tmpRoot string
}

// New returns a Confiner using Landlock, or an error when the kernel has none.
func New(opts Options) (*Confiner, error) {
	abi := ABI()
	if abi < 1 {
		return nil, errors.New("the kernel offers no Landlock (not built in, or not in the lsm= list)")
	}
	tmp := opts.TmpRoot
	if tmp == "" {
		tmp = os.TempDir()
	}
	return &Confiner{abi: abi, secrets: resolveAll(opts.Secrets), shared: resolveAll(opts.Shared), tmpRoot: tmp}, nil
}

// ABI is the Landlock ABI version the confined processes get; 0 for a nil Confiner.
func (c *Confiner) ABI() int {
	if c == nil {
		return 0
	}
	return c.abi
}

// Wrap makes cmd start confined: it starts as the gateway's own binary, which restricts itself to cmd's
// directory (read-write), its HOME (read-write), a private TMPDIR, the system directories and its PATH (read
// and execute), extra, and then executes the command. What release removes (the private TMPDIR) must outlive
// the process: call it once the process has been waited for. cmd.Env must be set (never nil).
func (c *Confiner) Wrap(cmd *exec.Cmd, extra Extra) (release func(), err error) {
	if c == nil || cmd.Err != nil {
		return func() {}, nil // unconfined; a command that cannot be found fails in Start as before
	}
	tmp, err := os.MkdirTemp(c.tmpRoot, "acp-gateway-tmp-")
	if err != nil {
		return nil, fmt.Errorf("confine: private TMPDIR: %v", err)
	}
	release = func() { _ = os.RemoveAll(tmp) }
	env := setEnv(cmd.Env, "TMPDIR", tmp)
	var spec helperSpec
	spec.Path = cmd.Path
	grant := func(p string, write bool) {
		r, ok := resolve(p)
		if !ok {
			return
		}
		dirs, files := carve(r, c.secrets, c.shared, 0)
		if write {
			spec.WriteDirs = append(spec.WriteDirs, dirs...)
		} else {
			spec.ReadDirs = append(spec.ReadDirs, dirs...)
		}
		spec.ReadFiles = append(spec.ReadFiles, files...)
	}
	for _, d := range systemReadDirs {
		grant(d, false)
	}
	for _, d := range filepath.SplitList(getEnv(env, "PATH")) {
		if filepath.IsAbs(d) {
			grant(d, false)
		}
	}
	grant(filepath.Dir(cmd.Path), false)
	grant(cmd.Path, false)
	for _, d := range extra.Read {
		grant(d, false)
	}
	dir := cmd.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	for _, d := range append([]string{dir, getEnv(env, "HOME"), tmp, "/dev/shm"}, extra.Write...) {
		if d != "" {
			grant(d, true)
		}
	}
	spec.Devices = devices
	b, err := json.Marshal(spec)
	if err != nil {
		release()
		return nil, err
	}
	cmd.Env = append(env, helperVar+"="+string(b))
	cmd.Path = "/proc/self/exe" // the child's own image, before it executes anything: this binary
	return release, nil
}

// setEnv returns env with k set to v (replacing any entry for k).
func setEnv(env []string, k, v string) []string {
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if !strings.HasPrefix(e, k+"=") {
			out = append(out, e)
		}
	}
	return append(out, k+"="+v)
}

// getEnv returns the last value of k in env (the one a process sees), or "".
func getEnv(env []string, k string) string {
	v := ""
	for _, e := range env {
		if strings.HasPrefix(e, k+"=") {
			v = e[len(k)+1:]
		}
	}
	return v
}
