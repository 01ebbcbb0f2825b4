package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// helperVar carries a confined command's rules from Wrap to the helper, in the helper's environment only:
// the helper removes it before it executes the command.
const helperVar = "ACP_GATEWAY_CONFINE"

// helperSpec is what the helper needs: the command to execute and the paths it may use.
type helperSpec struct {
	Path      string   `json:"path"`      // the command, already resolved
	ReadDirs  []string `json:"readDirs"`  // read and execute, recursively
	WriteDirs []string `json:"writeDirs"` // read, write, create, remove, recursively
	ReadFiles []string `json:"readFiles"` // read and execute, one file each
	Devices   []string `json:"devices"`   // read, write and ioctl: /dev/null, ttys
	ErrFD     int      `json:"errFD"`     // where a failure is reported to Wrap's caller; closed by a successful exec
}

// helperReport is what the helper tells Wrap's caller when it could not execute the command.
type helperReport struct {
	Errno   int    `json:"errno,omitempty"` // execve's error, 0 when the failure came before it
	Message string `json:"message"`
}

// init turns any binary that links this package (the gateway, and the test binaries that start agents) into
// the confinement helper when it is started with helperVar: it never returns then.
func init() {
	v, ok := os.LookupEnv(helperVar)
	if !ok {
		return
	}
	var spec helperSpec
	err := json.Unmarshal([]byte(v), &spec)
	if err != nil {
		err = fmt.Errorf("bad %s: %v", helperVar, err)
	} else {
		if spec.ErrFD > 2 { // never stdin, stdout or stderr, which the command needs
			syscall.CloseOnExec(spec.ErrFD)
		}
		err = runHelper(spec)
	}
	if spec.ErrFD > 2 {
		rep := helperReport{Message: err.Error()}
		var errno syscall.Errno
		if pe, ok := err.(*os.PathError); ok && errors.As(pe.Err, &errno) {
			rep.Errno = int(errno)
		}
		b, _ := json.Marshal(rep) // a struct of an int and a string always marshals
		_, _ = syscall.Write(spec.ErrFD, b)
	}
	fmt.Fprintf(os.Stderr, "acp-gateway confine: %v\n", err)
	os.Exit(126)
}

// runHelper restricts the calling thread and executes the command from it. The domain of the thread that
// calls execve becomes the new program's, so no other thread needs restricting; the thread is never unlocked.
func runHelper(spec helperSpec) error {
	env := make([]string, 0, len(os.Environ()))
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, helperVar+"=") {
			env = append(env, e)
		}
	}
	fd, flags, err := rulesetConfig().NewRulesetFD(spec.rules()...)
	if err != nil {
		return fmt.Errorf("landlock ruleset: %v", err)
	}
	runtime.LockOSThread() // never unlocked: the process ends in execve
	if err := restrictThread(fd, flags); err != nil {
		return err
	}
	err = syscall.Exec(spec.Path, os.Args, env)
	return &os.PathError{Op: "fork/exec", Path: spec.Path, Err: err}
}

// rulesetConfig is Landlock ABI 7's file system rights and IPC scopes (no signals to, no abstract sockets of
// processes outside the domain), downgraded to what the kernel has. The network is not restricted.
func rulesetConfig() landlock.Config {
	c := landlock.V7
	c.HandledAccessNet = 0
	return c.BestEffort()
}

func (s helperSpec) rules() []landlock.Rule {
	var rules []landlock.Rule
	if len(s.ReadDirs) > 0 {
		rules = append(rules, landlock.RODirs(s.ReadDirs...).IgnoreIfMissing())
	}
	if len(s.WriteDirs) > 0 {
		rules = append(rules, landlock.RWDirs(s.WriteDirs...).WithRefer().IgnoreIfMissing())
	}
	if len(s.ReadFiles) > 0 {
		rules = append(rules, landlock.ROFiles(s.ReadFiles...).IgnoreIfMissing())
	}
	if len(s.Devices) > 0 {
		rules = append(rules, landlock.RWFiles(s.Devices...).WithIoctlDev().IgnoreIfMissing())
	}
	return rules
}

// ABI is the Landlock ABI version the kernel offers, 0 when it has none (or it is disabled).
func ABI() int {
	v, err := llsyscall.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}
