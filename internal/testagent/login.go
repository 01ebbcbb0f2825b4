package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// The login mode: an agent that needs a terminal login. initialize offers two terminal auth methods whose
// login command is this agent's own command with their args (ACP's terminal AuthMethod); session/new
// answers auth_required (-32000) until a credential file exists under $HOME.
//
//	-login-code   prompts "Enter code: " on its terminal, reads a line, and on loginCode writes the
//	              credential and exits 0; on anything else prints "Wrong code." and exits 1. With -login-hang it
//	              never reads (a login that runs until it is killed).
//	-login-oauth  listens on 127.0.0.1 (any free port), prints the authorization URL whose redirect_uri is
//	              http://localhost:<port>/callback, and waits for GET /callback?code=loginCode: then writes the
//	              credential, answers "logged in" and exits 0.
const (
	loginCode      = "4242-7171"
	credentialFile = ".testagent-credential"
	// loginBanner is printed by the login command: a test looks for it where the output must never be.
	loginBanner = "testagent login banner 9f1c"
)

// loginMethods are the terminal auth methods the login mode offers.
func loginMethods() []acp.AuthMethod {
	return []acp.AuthMethod{
		{Terminal: &acp.AuthMethodTerminalInline{Id: "code", Name: "Log in with a code", Type: "terminal",
			Args: []string{"-login-code"}, Env: map[string]any{"TESTAGENT_LOGIN": "code"}}},
		{Terminal: &acp.AuthMethodTerminalInline{Id: "oauth", Name: "Log in with a browser", Type: "terminal",
			Args: []string{"-login-oauth"}}},
	}
}

// loggedIn reports whether a login wrote the credential under $HOME.
func loggedIn() bool {
	_, err := os.Stat(filepath.Join(os.Getenv("HOME"), credentialFile))
	return err == nil
}

// writeCredential is what a successful login leaves behind.
func writeCredential() error {
	return os.WriteFile(filepath.Join(os.Getenv("HOME"), credentialFile), []byte("token\n"), 0o600)
}

// loginWithCode is the -login-code command.
func loginWithCode(hangAfterPrompt bool) int {
	fmt.Printf("%s (TESTAGENT_LOGIN=%s)\r\n", loginBanner, os.Getenv("TESTAGENT_LOGIN"))
	fmt.Print("Enter code: ")
	if hangAfterPrompt {
		hang()
	}
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && line == "" {
		fmt.Println("no code:", err)
		return 2
	}
	if strings.TrimRight(line, "\r\n") != loginCode {
		fmt.Println("Wrong code.")
		return 1
	}
	if err := writeCredential(); err != nil {
		fmt.Println("cannot save the credential:", err)
		return 3
	}
	fmt.Println("Logged in.")
	return 0
}

// loginWithOAuth is the -login-oauth command: a loopback redirect as OAuth CLIs do it.
func loginWithOAuth() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		return 2
	}
	port := ln.Addr().(*net.TCPAddr).Port
	fmt.Printf("Open this URL to log in:\r\nhttps://auth.example.test/authorize?client_id=testagent&redirect_uri=http://localhost:%d/callback\r\n", port)
	done := make(chan int, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" || r.URL.Query().Get("code") != loginCode {
			http.Error(w, "wrong code", http.StatusBadRequest)
			return
		}
		if err := writeCredential(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			done <- 3
			return
		}
		fmt.Fprintln(w, "logged in")
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		select {
		case done <- 0:
		default:
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	code := <-done
	_ = srv.Shutdown(context.Background())
	fmt.Println("Logged in.")
	return code
}
