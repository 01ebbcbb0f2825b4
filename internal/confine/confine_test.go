package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// run starts "sh -c script" confined by c in dir, with HOME home, and returns its combined output and error.
func run(t *testing.T, c *Confiner, dir, home, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home}
	confined, err := c.Wrap(cmd, Extra{}, cmd.Env)
	if err != nil {
		t.Fatal(err)
	}
	defer confined.Release()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func newConfiner(t *testing.T, opts Options) *Confiner {
	t.Helper()
	if ABI() < 1 {
		t.Skip("no Landlock on this kernel")
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A confined process uses its cwd, its HOME and its TMPDIR, and reads nothing else of the gateway's: not a
// secret inside its HOME (carved out), not another session's cwd in the same workspace root, not the
// gateway's environment through /proc, even as root.
func TestWrapConfines(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "work")
	mine, other := filepath.Join(root, "ann"), filepath.Join(root, "bob")
	home := filepath.Join(base, "home")
	secret := filepath.Join(home, "data")
	write(t, filepath.Join(mine, "own.txt"), "own")
	write(t, filepath.Join(other, "bob.txt"), "bob's")
	write(t, filepath.Join(secret, "blocks"), "transcript")
	write(t, filepath.Join(home, ".config", "tool.conf"), "conf")
	t.Setenv("GATEWAY_TEST_SECRET", "s3cret")
	c := newConfiner(t, Options{Secrets: []string{secret}, Shared: []string{root}})

	out, err := run(t, c, mine, home, `cat own.txt && echo new > new.txt && cat "$HOME/.config/tool.conf" && echo t > "$TMPDIR/x" && cat "$TMPDIR/x"`)
	if err != nil || out != "ownconft\n" {
		t.Fatalf("own cwd, HOME, TMPDIR: %q, %v", out, err)
	}
	for name, script := range map[string]string{
		"secret in HOME":             "cat " + filepath.Join(secret, "blocks"),
		"list secret":                "ls " + secret,
		"other session's cwd":        "cat " + filepath.Join(other, "bob.txt"),
		"write beside cwd":           "echo x > " + filepath.Join(root, "x"),
		"gateway's cwd via /proc":    "ls /proc/" + strconv.Itoa(os.Getpid()) + "/cwd/",
		"a child's read of a secret": "sh -c 'cat " + filepath.Join(secret, "blocks") + "'",
		"gateway's fds via /proc":    "readlink /proc/" + strconv.Itoa(os.Getpid()) + "/fd/0",
		"signal the gateway":         "kill -0 " + strconv.Itoa(os.Getpid()),
	} {
		out, err := run(t, c, mine, home, script)
		if err == nil || strings.Contains(out, "transcript") || strings.Contains(out, "s3cret") || strings.Contains(out, "bob's") {
			t.Errorf("%s: allowed: %q", name, out)
		}
	}
}

// Landlock's ptrace scoping keeps a confined process from the gateway's cwd and fds, but on this kernel not
// from its environ: ScrubEnviron takes the secrets out of it.
func TestScrubEnvironHidesSecrets(t *testing.T) {
	c := newConfiner(t, Options{})
	dir := t.TempDir()
	environ := "/proc/" + strconv.Itoa(os.Getpid()) + "/environ"
	before, _ := run(t, c, dir, dir, "cat "+environ)
	if err := ScrubEnviron(); err != nil {
		t.Fatal(err)
	}
	after, _ := run(t, c, dir, dir, "cat "+environ)
	if strings.Contains(after, "PATH=") {
		t.Fatalf("environ still readable after ScrubEnviron: %q", after)
	}
	if !strings.Contains(before, "PATH=") {
		t.Logf("environ was not readable before either: %q", before)
	}
	if os.Getenv("PATH") == "" {
		t.Fatal("the process's own environment was lost")
	}
}

// A command the helper cannot execute (its interpreter is missing) fails in Started, as cmd.Start fails for
// an unconfined one, not later as an exit status.
func TestStartedReportsExecFailure(t *testing.T) {
	c := newConfiner(t, Options{})
	dir := t.TempDir()
	bin := filepath.Join(dir, "broken")
	write(t, bin, "#!/nonexistent/interp\n")
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir, cmd.Env = dir, []string{}
	confined, err := c.Wrap(cmd, Extra{}, cmd.Env)
	if err != nil {
		t.Fatal(err)
	}
	defer confined.Release()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err = confined.Started()
	_ = cmd.Wait()
	if err == nil || !strings.Contains(err.Error(), "fork/exec "+bin) {
		t.Fatalf("Started: %v, want the exec failure", err)
	}
	ok := exec.Command("/bin/true")
	ok.Env = []string{}
	confined, err = c.Wrap(ok, Extra{}, ok.Env)
	if err != nil {
		t.Fatal(err)
	}
	defer confined.Release()
	if err := ok.Start(); err != nil {
		t.Fatal(err)
	}
	if err := confined.Started(); err != nil {
		t.Fatalf("Started of a command that runs: %v", err)
	}
	if err := ok.Wait(); err != nil {
		t.Fatal(err)
	}
}

// SweepTmp removes the private TMPDIRs of owners that no longer run, and nothing else.
func TestSweepTmp(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{tmpPrefix + "11.5-abc", tmpPrefix + "12.6-def", "acp-gateway-tmpX", "other"} {
		if err := os.Mkdir(filepath.Join(root, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if n := SweepTmp(root, func(owner string) bool { return owner == "12.6" }); n != 1 {
		t.Fatalf("removed %d, want 1", n)
	}
	entries, _ := os.ReadDir(root)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if strings.Join(left, ",") != tmpPrefix+"12.6-def,acp-gateway-tmpX,other" {
		t.Fatalf("left %v", left)
	}
}

// A secret that does not exist yet behind a symlinked parent (a data dir the gateway creates after
// start) is recognised where it will be.
func TestResolveAllMissingBehindSymlink(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	got := resolveAll([]string{filepath.Join(link, "data", "dir")})
	if want := filepath.Join(real, "data", "dir"); len(got) != 1 || got[0] != want {
		t.Fatalf("resolveAll = %v, want [%s]", got, want)
	}
}

// An npm-installed command (node_modules/.bin/x, a link into its package) reads its package and its
// dependencies from the node_modules tree, and nothing beside that tree.
func TestNpmInstalledCommandReadsItsPackage(t *testing.T) {
	c := newConfiner(t, Options{})
	base := t.TempDir()
	modules := filepath.Join(base, "proj", "node_modules")
	write(t, filepath.Join(modules, "dep", "data.txt"), "dep")
	write(t, filepath.Join(base, "proj", "secret.txt"), "beside-the-tree")
	write(t, filepath.Join(modules, "pkg", "bin", "tool.sh"),
		"#!/bin/sh\ncat \"$(dirname \"$(readlink -f \"$0\")\")/../../dep/data.txt\" && cat \"$1\"\n")
	if err := os.Chmod(filepath.Join(modules, "pkg", "bin", "tool.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(modules, ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../pkg/bin/tool.sh", filepath.Join(bin, "tool")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	runTool := func(arg string) (string, error) {
		cmd := exec.Command(filepath.Join(bin, "tool"), arg)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
		confined, err := c.Wrap(cmd, Extra{}, cmd.Env)
		if err != nil {
			t.Fatal(err)
		}
		defer confined.Release()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := runTool("/dev/null"); err != nil || out != "dep" {
		t.Fatalf("the package's dependency: %q, %v", out, err)
	}
	if out, err := runTool(filepath.Join(base, "proj", "secret.txt")); err == nil || strings.Contains(out, "beside-the-tree") {
		t.Fatalf("a file beside node_modules: allowed: %q", out)
	}
}
