package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
	// Owner names this gateway process in the TMPDIRs' names (no "-"), so that SweepTmp run by a later
	// gateway can tell which ones a dead gateway left.
	Owner string
}

// Confiner prepares commands to run confined. A nil *Confiner confines nothing.
type Confiner struct {
	// Static after construction.
	abi       int
	secrets   []string
	shared    []string
	tmpRoot   string
	tmpPrefix string // tmpPrefix + Owner + "-"
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
	return &Confiner{abi: abi, secrets: resolveAll(opts.Secrets), shared: resolveAll(opts.Shared), tmpRoot: tmp,
		tmpPrefix: tmpPrefix + opts.Owner + "-"}, nil
}

// ABI is the Landlock ABI version the confined processes get; 0 for a nil Confiner.
func (c *Confiner) ABI() int {
	if c == nil {
		return 0
	}
	return c.abi
}

// Confined is a command Wrap prepared. Its methods do nothing on a nil *Confined (an unconfined command).
type Confined struct {
	path   string   // the command
	tmp    string   // the private TMPDIR
	errR   *os.File // read end of the helper's failure report
	errW   *os.File // its write end, the helper's; closed once the command has started
	closed bool
}

// Started waits until the helper has executed the command and returns the error it reported instead, an
// *os.PathError as cmd.Start would have returned (exec.Cmd learns of a failed exec the same way). Call it right after cmd.Start
// succeeded; after an error, wait for the process (it exits at once).
func (w *Confined) Started() error {
	if w == nil {
		return nil
	}
	w.closeWriter()
	msg, err := io.ReadAll(w.errR) // EOF when the exec closed the helper's end
	w.errR.Close()
	if err != nil {
		return fmt.Errorf("confine: reading the helper's report: %v", err)
	}
	if len(msg) == 0 {
		return nil
	}
	var rep helperReport
	if err := json.Unmarshal(msg, &rep); err != nil {
		return &os.PathError{Op: "confine", Path: w.path, Err: fmt.Errorf("unreadable helper report %q", msg)}
	}
	if rep.Errno != 0 {
		return &os.PathError{Op: "fork/exec", Path: w.path, Err: syscall.Errno(rep.Errno)}
	}
	return &os.PathError{Op: "confine", Path: w.path, Err: errors.New(rep.Message)}
}

// Release removes what Wrap made for the command (its TMPDIR). Call it once the process has been waited for,
// or when it did not start.
func (w *Confined) Release() {
	if w == nil {
		return
	}
	w.closeWriter()
	_ = w.errR.Close()
	_ = os.RemoveAll(w.tmp)
}

func (w *Confined) closeWriter() {
	if !w.closed {
		w.closed = true
		_ = w.errW.Close()
	}
}

// Wrap makes cmd start confined: it starts as the gateway's own binary, which restricts itself to cmd's
// directory (read-write), the HOME of trusted (read-write), a private TMPDIR, the system directories and the
// PATH of trusted (read and execute), extra, and then executes the command. trusted is the environment the
// operator configured for the process: cmd.Env may hold entries its requester chose (a terminal's env), which
// must not widen what it gets. cmd.Env must be set (never nil). A nil Confiner, or a command that cannot be
// found (it fails in Start as before), returns a nil *Confined.
func (c *Confiner) Wrap(cmd *exec.Cmd, extra Extra, trusted []string) (*Confined, error) {
	if c == nil || cmd.Err != nil {
		return nil, nil
	}
	tmp, err := os.MkdirTemp(c.tmpRoot, c.tmpPrefix)
	if err != nil {
		return nil, fmt.Errorf("confine: private TMPDIR: %v", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	w := &Confined{path: cmd.Path, tmp: tmp, errR: errR, errW: errW}
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
	for _, d := range filepath.SplitList(getEnv(trusted, "PATH")) {
		if filepath.IsAbs(d) {
			grant(d, false)
		}
	}
	grant(filepath.Dir(cmd.Path), false)
	grant(cmd.Path, false)
	for _, d := range commandTrees(cmd.Path) {
		grant(d, false)
	}
	for _, d := range extra.Read {
		grant(d, false)
	}
	dir := cmd.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	for _, d := range append([]string{dir, getEnv(trusted, "HOME"), tmp, "/dev/shm"}, extra.Write...) {
		if d != "" {
			grant(d, true)
		}
	}
	spec.Devices = devices
	cmd.ExtraFiles = append(cmd.ExtraFiles, errW)
	spec.ErrFD = 2 + len(cmd.ExtraFiles)
	b, err := json.Marshal(spec)
	if err != nil {
		w.Release()
		return nil, err
	}
	// The spec replaces any entry of its name a requester set; /proc/self/exe is the child's own image before
	// it executes anything: this binary.
	cmd.Env = setEnv(env, helperVar, string(b))
	cmd.Path = "/proc/self/exe"
	return w, nil
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

// commandTrees are what a command reads besides its own directory: the directory of the file it links to,
// and the outermost node_modules tree that holds either, since an npm-installed agent (node_modules/.bin/x)
// loads its package and its dependencies from there.
func commandTrees(path string) []string {
	var trees []string
	paths := []string{path}
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		paths = append(paths, real)
		trees = append(trees, filepath.Dir(real))
	}
	for _, p := range paths {
		if i := strings.Index(p, "/node_modules/"); i >= 0 {
			trees = append(trees, p[:i+len("/node_modules")])
		}
	}
	return trees
}
