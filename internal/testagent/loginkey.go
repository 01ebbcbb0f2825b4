package main

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"

	acp "github.com/coder/acp-go-sdk"
)

// Login by key (-login KEY): the agent demands a login, as most agents of the ACP registry do. initialize offers an
// env_var method "test-key" (TEST_API_KEY, secret and required; TEST_REGION, not secret and optional), an
// agent method "agent-login" and the logout capability; session/new, session/load and session/resume
// answer auth_required (-32000) until TEST_API_KEY equals KEY or "agent-login" was authenticated on this
// process. A wrong key is quoted in the error's data, and a right one on stderr, so a test can check that
// the gateway keeps both out of everything it shows and logs. With -login, every prompt's answer starts with a
// chunk that quotes the key, as an agent running `env` in a tool would.

// loginMethodAgent is the agent method of -login.
const loginMethodAgent = "agent-login"

// loginAuthMethods are the methods -login offers.
func loginAuthMethods() []acp.AuthMethod {
	return []acp.AuthMethod{
		{EnvVar: &acp.AuthMethodEnvVarInline{Id: "test-key", Name: "Test API key", Type: "env_var",
			Description: acp.Ptr("A key for the test agent"), Link: acp.Ptr("https://example.com/keys"),
			Vars: []acp.AuthEnvVar{
				{Name: "TEST_API_KEY", Label: acp.Ptr("API key"), Secret: true},
				// Secret false is dropped by the SDK's omitempty (read back as true): Initialize puts it back.
				{Name: "TEST_REGION", Label: acp.Ptr("Region"), Secret: false, Optional: true},
			}}},
		{Agent: &acp.AuthMethodAgent{Id: loginMethodAgent, Name: "Log in with the agent", Description: acp.Ptr("The agent logs itself in")}},
	}
}

// loginState is what -login needs at run time.
type loginState struct {
	key    string      // -login; "" = no login demanded
	authed atomic.Bool // "agent-login" was authenticated on this process
}

// checkLogin is nil when the agent may open a session, else ACP's auth_required.
func (l *loginState) checkLogin() error {
	if l.key == "" || l.authed.Load() {
		return nil
	}
	got := os.Getenv("TEST_API_KEY")
	if got == l.key {
		fmt.Fprintf(os.Stderr, "testagent: logged in with key %s (region %q)\n", got, os.Getenv("TEST_REGION"))
		return nil
	}
	msg := "TEST_API_KEY is not set"
	if got != "" {
		msg = "TEST_API_KEY " + got + " is not valid"
	}
	return &acp.RequestError{Code: -32000, Message: "Authentication required", Data: msg}
}

// authenticateLogin handles -login's agent method; ok is false for any other method.
func (l *loginState) authenticateLogin(methodID string) bool {
	if l.key == "" || methodID != loginMethodAgent {
		return false
	}
	l.authed.Store(true)
	return true
}

// UnstableLogout implements ACP logout (advertised with -login): the process forgets its agent login.
func (a *agent) UnstableLogout(ctx context.Context, p acp.UnstableLogoutRequest) (acp.UnstableLogoutResponse, error) {
	a.login.authed.Store(false)
	return acp.UnstableLogoutResponse{}, nil
}

// leakKey sends a message chunk quoting the agent's TEST_API_KEY (-login), before the mode's own answer.
func (a *agent) leakKey(sid acp.SessionId) {
	if a.login.key == "" {
		return
	}
	_ = a.update(context.Background(), sid, acp.UpdateAgentMessageText("my key is "+os.Getenv("TEST_API_KEY")+"\n"))
}
