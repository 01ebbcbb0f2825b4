package termlogin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/principal"
)

var (
	ann = principal.Principal{ID: "ann@example.com", Name: "Ann", Role: principal.RoleUser}
	bob = principal.Principal{ID: "bob", Name: "Bob", Role: principal.RoleUser}
)

// loginMethods is what the test agent's login mode answers in initialize (testagent/login.go).
const loginMethods = `[{"id":"code","name":"Log in with a code","type":"terminal","args":["-login-code"],"env":{"TESTAGENT_LOGIN":"code","HOME":"/elsewhere"}},
{"id":"oauth","name":"Log in with a browser","type":"terminal","args":["-login-oauth"]}]`

// fakeTimers stands in for time.AfterFunc: the test fires the timers it wants, when it wants.
type fakeTimers struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func (ft *fakeTimers) AfterFunc(d time.Duration, f func()) func() bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	t := &fakeTimer{d: d, f: f}
	ft.timers = append(ft.timers, t)
	return func() bool {
		ft.mu.Lock()
		defer ft.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// fire runs the live timers set for d.
func (ft *fakeTimers) fire(d time.Duration) int {
	ft.mu.Lock()
	var due []*fakeTimer
	for _, t := range ft.timers {
		if t.d == d && !t.stopped {
			t.stopped = true
			due = append(due, t)
		}
	}
	ft.mu.Unlock()
	for _, t := range due {
		t.f()
	}
	return len(due)
}

// newTestManager runs the test agent in login mode (extra args after -mode login) with a HOME per principal
// under a temporary root.
func newTestManager(t *testing.T, ft *fakeTimers, extra ...string) (*Manager, string) {
	t.Helper()
	root := t.TempDir()
	spec := agents.Spec{Name: "ta", Kind: agents.KindACP, Command: testAgent, Args: append([]string{"-mode", "login"}, extra...),
		Home: agents.HomePerPrincipal}
	spec.SetHomeRoot(root)
	cfg := Config{
		Specs: []agents.Spec{spec},
		AuthMethods: func(ctx context.Context, agent string) (json.RawMessage, bool) {
			return json.RawMessage(loginMethods), agent == "ta"
		},
		Env: []string{"PATH=" + os.Getenv("PATH")}, Workdir: t.TempDir(),
	}
	if ft != nil {
		cfg.AfterFunc = ft.AfterFunc
	}
	m := New(cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := m.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return m, filepath.Join(root, "ta")
}

// readUntil reads the login's output until it holds want (or the login ends), failing after 30 s.
func readUntil(t *testing.T, l *Login, want string) (string, *Exit) {
	t.Helper()
	var out bytes.Buffer
	var off int64
	timeout := time.After(30 * time.Second)
	for {
		data, next, wake, exit := l.Read(off)
		out.Write(data)
		off = next
		if (want != "" && strings.Contains(out.String(), want)) || exit != nil {
			return out.String(), exit
		}
		select {
		case <-wake:
		case <-timeout:
			t.Fatalf("no %q in the login's output:\n%s", want, out.String())
		}
	}
}

func TestTerminalLoginWithCode(t *testing.T) {
	m, homes := newTestManager(t, nil)
	l, err := m.Start(context.Background(), ann, "ta", "code", 100, 30)
	if err != nil {
		t.Fatal(err)
	}
	out, exit := readUntil(t, l, "Enter code: ")
	if exit != nil {
		t.Fatalf("ended before the prompt: %+v\n%s", exit, out)
	}
	// The method's env reaches the command; its HOME does not override the principal's.
	if !strings.Contains(out, "TESTAGENT_LOGIN=code") {
		t.Errorf("the method's env did not reach the login command:\n%s", out)
	}
	if err := l.Input([]byte("4242-7171\r")); err != nil {
		t.Fatal(err)
	}
	out, exit = readUntil(t, l, "")
	if exit == nil || !exit.OK() {
		t.Fatalf("exit = %+v, want 0 exited\n%s", exit, out)
	}
	annHome := filepath.Join(homes, agents.HomeDirName(ann.ID))
	if _, err := os.Stat(filepath.Join(annHome, ".testagent-credential")); err != nil {
		t.Errorf("no credential in Ann's HOME: %v", err)
	}
	fi, err := os.Stat(annHome)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("Ann's HOME: %v, mode %v; want 0700", err, fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(homes, agents.HomeDirName(bob.ID), ".testagent-credential")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Bob's HOME has a credential: %v", err)
	}
	if err := l.Input([]byte("x")); !errors.Is(err, ErrFinished) {
		t.Errorf("input after the end: %v, want ErrFinished", err)
	}
}

func TestTerminalLoginWrongCode(t *testing.T) {
	m, homes := newTestManager(t, nil)
	l, err := m.Start(context.Background(), ann, "ta", "code", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, l, "Enter code: ")
	if err := l.Input([]byte("0000\r")); err != nil {
		t.Fatal(err)
	}
	out, exit := readUntil(t, l, "")
	if exit == nil || exit.OK() || exit.ExitCode != 1 || exit.Reason != ReasonExited {
		t.Fatalf("exit = %+v, want 1 exited\n%s", exit, out)
	}
	if !strings.Contains(out, "Wrong code.") {
		t.Errorf("output lacks the command's complaint:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(homes, agents.HomeDirName(ann.ID), ".testagent-credential")); err == nil {
		t.Error("a wrong code left a credential")
	}
}

func TestTerminalLoginKilledAtDeadline(t *testing.T) {
	ft := &fakeTimers{}
	m, _ := newTestManager(t, ft, "-login-hang")
	l, err := m.Start(context.Background(), ann, "ta", "code", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, l, "Enter code: ")
	if n := ft.fire(m.Lifetime()); n != 1 {
		t.Fatalf("%d deadline timers fired, want 1", n)
	}
	<-l.Done()
	_, exit := readUntil(t, l, "")
	if exit == nil || exit.Reason != ReasonDeadline || exit.Signal != "killed" {
		t.Fatalf("exit = %+v, want killed at the deadline", exit)
	}
	if l.Deadline.IsZero() {
		t.Error("no deadline reported")
	}
}

func TestTerminalLoginOwnerOnly(t *testing.T) {
	m, _ := newTestManager(t, nil, "-login-hang")
	l, err := m.Start(context.Background(), ann, "ta", "code", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(bob, "ta", l.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Bob's Get of Ann's login: %v, want ErrNotFound", err)
	}
	if got, err := m.Get(ann, "ta", l.ID); err != nil || got != l {
		t.Errorf("Ann's Get: %v", err)
	}
	// One live login per principal and agent; Bob's own is his.
	var inProgress *InProgressError
	if _, err := m.Start(context.Background(), ann, "ta", "code", 0, 0); !errors.As(err, &inProgress) || inProgress.LoginID != l.ID {
		t.Errorf("second Start: %v, want InProgressError naming %s", err, l.ID)
	}
	lb, err := m.Start(context.Background(), bob, "ta", "code", 0, 0)
	if err != nil {
		t.Fatalf("Bob's Start: %v", err)
	}
	l.Kill(ReasonCancelled)
	lb.Kill(ReasonCancelled)
	<-l.Done()
	if _, exit := readUntil(t, l, ""); exit.Reason != ReasonCancelled {
		t.Errorf("exit = %+v, want cancelled", exit)
	}
	if _, err := m.Start(context.Background(), ann, "ta", "nope", 0, 0); !errors.Is(err, ErrUnknownMethod) {
		t.Errorf("unknown method: %v", err)
	}
	if _, err := m.Start(context.Background(), ann, "other", "code", 0, 0); !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("unknown agent: %v", err)
	}
}

var redirectRE = regexp.MustCompile(`redirect_uri=http://localhost:(\d+)(/callback)`)

func TestTerminalLoginListensOn(t *testing.T) {
	m, homes := newTestManager(t, nil)
	l, err := m.Start(context.Background(), ann, "ta", "oauth", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := readUntil(t, l, "/callback")
	mm := redirectRE.FindStringSubmatch(out)
	if mm == nil {
		t.Fatalf("no redirect URL in:\n%s", out)
	}
	var port int
	fmt.Sscan(mm[1], &port)
	if !l.ListensOn(port) {
		t.Fatalf("the login's own port %d is not recognised", port)
	}
	// A port another process of ours listens on is not the login's.
	other := startOtherListener(t)
	if l.ListensOn(other) {
		t.Errorf("port %d of another process counted as the login's", other)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/callback?code=4242-7171", port))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if _, exit := readUntil(t, l, ""); exit == nil || !exit.OK() {
		t.Fatalf("exit = %+v", exit)
	}
	if _, err := os.Stat(filepath.Join(homes, agents.HomeDirName(ann.ID), ".testagent-credential")); err != nil {
		t.Error(err)
	}
	if l.ListensOn(port) {
		t.Error("an ended login still listens")
	}
}
