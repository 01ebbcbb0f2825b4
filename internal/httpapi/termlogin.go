package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/termlogin"
	"github.com/acp-gateway/gateway/internal/ws"
	"github.com/coder/websocket"
	"github.com/go-chi/chi/v5"
)

// Terminal logins: an agent's login command run in a PTY for its principal (package termlogin). The socket
// carries the terminal's bytes as binary frames and, as text frames, JSON messages: the client's
// {"type":"input","data"} and {"type":"resize","cols","rows"}, the gateway's final {"type":"exit",...}.

// Close codes of a login socket besides the session socket's (ws/codes.go).
const (
	loginReasonNotFound = "login not found"
	loginReasonEnded    = "login ended"
	loginReasonBadMsg   = "bad message"
)

// loginInputLimit bounds one message from a login socket: keystrokes and pastes, not files.
const loginInputLimit = 64 << 10

// maxLoginTermSize bounds a login terminal's columns and rows, at its start and on every resize.
const maxLoginTermSize = 1000

// isLoginSocket reports whether rest (the path after /v1/agents/) is `{agent}/login/terminal/{loginId}`.
func isLoginSocket(rest string) bool {
	parts := strings.Split(rest, "/")
	return len(parts) == 4 && parts[0] != "" && parts[1] == "login" && parts[2] == "terminal" && parts[3] != ""
}

// startLoginRequest is the body of POST /v1/agents/{agent}/login/terminal.
type startLoginRequest struct {
	MethodID string `json:"methodId"`
	Cols     uint16 `json:"cols,omitempty"`
	Rows     uint16 `json:"rows,omitempty"`
}

func (s *Server) logins() (*termlogin.Manager, error) {
	if s.Logins == nil {
		return nil, problem(http.StatusNotFound, "route_not_found", "this gateway runs no terminal logins")
	}
	return s.Logins, nil
}

// startTerminalLogin starts the caller's terminal login of an agent.
func (s *Server) startTerminalLogin(w http.ResponseWriter, r *http.Request) error {
	m, err := s.logins()
	if err != nil {
		return err
	}
	var req startLoginRequest
	if err := decodeBody(w, r, s.MaxBodyBytes, &req); err != nil {
		return err
	}
	if req.MethodID == "" {
		return badRequest("methodId is required: the id of one of the agent's terminal authMethods")
	}
	if req.Cols > maxLoginTermSize || req.Rows > maxLoginTermSize {
		return badRequest("cols and rows must be at most %d", maxLoginTermSize)
	}
	agent := chi.URLParam(r, "agent")
	ctx, cancel := context.WithTimeout(r.Context(), agentsListWait)
	defer cancel()
	p := principal.From(r.Context())
	l, err := m.Start(ctx, p, agent, req.MethodID, req.Cols, req.Rows)
	if err != nil {
		pr := termLoginProblem(err)
		if pr.Code == "login_failed" { // its error names the command's path: the log's, not the client's
			s.logger().Warn("terminal login did not start", "agent", agent, "method", req.MethodID, "err", err)
			pr.Detail = fmt.Sprintf("the login command of agent %q did not start (the gateway log has why)", agent)
		}
		return pr
	}
	principal.Audit(s.Logger, p, "terminal login", "agent", agent, "method", req.MethodID, "login", l.ID)
	writeJSON(w, http.StatusCreated, map[string]any{"loginId": l.ID, "agent": agent, "methodId": req.MethodID, "deadline": l.Deadline})
	return nil
}

// termLoginProblem maps termlogin's errors to problems.
func termLoginProblem(err error) *Problem {
	var busy *termlogin.InProgressError
	switch {
	case errors.As(err, &busy):
		p := problem(http.StatusConflict, "login_in_progress", "a terminal login of this agent is already running for you: attach to it or cancel it")
		p.LoginID = busy.LoginID
		return p
	case errors.Is(err, termlogin.ErrUnknownAgent):
		return problem(http.StatusNotFound, "unknown_agent", err.Error())
	case errors.Is(err, termlogin.ErrNotFound):
		return problem(http.StatusNotFound, "login_not_found", "no terminal login with this id for you")
	case errors.Is(err, termlogin.ErrUnknownMethod), errors.Is(err, termlogin.ErrNoLogin):
		return problem(http.StatusBadRequest, "unknown_auth_method", err.Error())
	case errors.Is(err, termlogin.ErrMethodsUnknown):
		return problem(http.StatusServiceUnavailable, "agent_unavailable", err.Error())
	case errors.Is(err, termlogin.ErrShuttingDown):
		return problem(http.StatusServiceUnavailable, "shutting_down", "the gateway is shutting down")
	}
	return problem(http.StatusBadGateway, "login_failed", "the login command did not start")
}

// cancelTerminalLogin kills the caller's login.
func (s *Server) cancelTerminalLogin(w http.ResponseWriter, r *http.Request) error {
	m, err := s.logins()
	if err != nil {
		return err
	}
	l, err := m.Get(principal.From(r.Context()), chi.URLParam(r, "agent"), chi.URLParam(r, "loginId"))
	if err != nil {
		return termLoginProblem(err)
	}
	l.Kill(termlogin.ReasonCancelled)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// loginMessage is a text message of a login socket, either way.
type loginMessage struct {
	Type string `json:"type"`
	Data string `json:"data,omitempty"`
	Cols uint16 `json:"cols,omitempty"`
	Rows uint16 `json:"rows,omitempty"`
}

// serveTerminalLogin attaches a socket to the caller's login: its output so far, then live; its keystrokes.
// Another principal's login is "not found" (4004), as one that never existed.
func (s *Server) serveTerminalLogin(w http.ResponseWriter, r *http.Request) {
	m, err := s.logins()
	if err != nil {
		writeError(w, err)
		return
	}
	l, lerr := m.Get(principal.From(r.Context()), chi.URLParam(r, "agent"), chi.URLParam(r, "loginId"))
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // the router's origin policy already judged the upgrade
		Subprotocols:       []string{ws.Subprotocol},
	})
	if err != nil {
		return
	}
	defer c.CloseNow()
	if lerr != nil {
		c.Close(ws.CodeNotFound, loginReasonNotFound)
		return
	}
	c.SetReadLimit(loginInputLimit)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer cancel()
		s.readLoginInput(ctx, c, l)
	}()
	code, reason := s.writeLoginOutput(ctx, c, l)
	c.Close(code, reason)
	cancel()
	<-readDone
}

// writeLoginOutput sends the login's output and finally its exit; it returns how to close the socket.
func (s *Server) writeLoginOutput(ctx context.Context, c *websocket.Conn, l *termlogin.Login) (websocket.StatusCode, string) {
	var off int64
	ping := time.NewTicker(25 * time.Second)
	defer ping.Stop()
	for {
		data, next, wake, exit := l.Read(off)
		off = next
		wctx, cancel := context.WithTimeout(ctx, s.streamWriteTimeout())
		if len(data) > 0 {
			if err := c.Write(wctx, websocket.MessageBinary, data); err != nil {
				cancel()
				return ws.CodeGoingAway, ""
			}
		}
		if exit != nil {
			b, _ := json.Marshal(struct {
				Type string `json:"type"`
				termlogin.Exit
			}{"exit", *exit})
			err := c.Write(wctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				return ws.CodeGoingAway, ""
			}
			return ws.CodeNormal, loginReasonEnded
		}
		cancel()
		select {
		case <-wake:
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, s.streamWriteTimeout())
			err := c.Ping(pctx)
			cancel()
			if err != nil {
				return ws.CodeGoingAway, ""
			}
		case <-ctx.Done():
			return ws.CodeGoingAway, ""
		case <-s.drainCh():
			return ws.CodeGoingAway, "gateway shutting down"
		}
	}
}

// decodeLoginMessage reads one message of a login socket's client: an input, or a resize to 1 to
// maxLoginTermSize columns and rows (the bound of the login's start). Anything else (a binary frame, JSON that
// is not one of them, another size) is not ok, and the socket is closed 1003.
func decodeLoginMessage(typ websocket.MessageType, data []byte) (loginMessage, bool) {
	var msg loginMessage
	if typ != websocket.MessageText || json.Unmarshal(data, &msg) != nil {
		return loginMessage{}, false
	}
	switch msg.Type {
	case "input":
		return msg, true
	case "resize":
		ok := msg.Cols >= 1 && msg.Cols <= maxLoginTermSize && msg.Rows >= 1 && msg.Rows <= maxLoginTermSize
		return msg, ok
	}
	return loginMessage{}, false
}

// readLoginInput types what the socket sends on the login's terminal until the socket ends.
func (s *Server) readLoginInput(ctx context.Context, c *websocket.Conn, l *termlogin.Login) {
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		msg, ok := decodeLoginMessage(typ, data)
		if !ok {
			c.Close(ws.CodeUnsupported, loginReasonBadMsg)
			return
		}
		if msg.Type == "input" {
			err = l.Input([]byte(msg.Data))
		} else {
			err = l.Resize(msg.Cols, msg.Rows)
			if err != nil && !errors.Is(err, termlogin.ErrFinished) {
				c.Close(ws.CodeUnsupported, loginReasonBadMsg)
				return
			}
		}
		if errors.Is(err, termlogin.ErrFinished) {
			continue // the exit message is on its way
		}
	}
}

// loginCallback forwards a GET to a loopback port the caller's login listens on: the OAuth redirect a login
// command waits for, which the user's browser could not deliver to the gateway's host itself. Only ports the
// login's own processes listen on (termlogin.Login.ListensOn) are reached, only for the login's principal.
func (s *Server) loginCallback(w http.ResponseWriter, r *http.Request) error {
	m, err := s.logins()
	if err != nil {
		return err
	}
	l, err := m.Get(principal.From(r.Context()), chi.URLParam(r, "agent"), chi.URLParam(r, "loginId"))
	if err != nil {
		return termLoginProblem(err)
	}
	port, err := callbackPort(chi.URLParam(r, "port"))
	if err != nil {
		return err
	}
	if !l.ListensOn(port) {
		return problem(http.StatusNotFound, "callback_not_listening", fmt.Sprintf("the login does not listen on 127.0.0.1:%d (it may have ended)", port))
	}
	target := &url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(port)}
	path, rawPath, err := callbackPath(chi.URLParam(r, "*"), r.URL.RawPath != "")
	if err != nil {
		return err
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = target.Scheme, target.Host
			pr.Out.URL.Path, pr.Out.URL.RawPath = path, rawPath
			pr.Out.Host = "localhost:" + strconv.Itoa(port) // the redirect_uri's host, as the browser would send it
			// The gateway's credential is not the login command's business.
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("Cookie")
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			writeError(w, problem(http.StatusBadGateway, "callback_failed", "the login command did not answer its callback"))
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Del("Set-Cookie") // never set on the gateway's origin by a login command
			// Whatever the command answers is shown on the gateway's origin: no scripts, no sniffing.
			resp.Header.Set("Content-Security-Policy", "sandbox")
			resp.Header.Set("X-Content-Type-Options", "nosniff")
			return nil
		},
	}
	proxy.ServeHTTP(w, r)
	return nil
}

// callbackPort reads a callback's port: a TCP port number, else 400 bad_request.
func callbackPort(s string) (int, error) {
	port, err := strconv.Atoi(s)
	if err != nil || port < 1 || port > 65535 {
		return 0, badRequest("port must be a TCP port number")
	}
	return port, nil
}

// callbackPath is the path a callback forwards, as the browser sent it: what follows the port. chi matches the
// escaped path when the request has one (escaped: r.URL.RawPath is set), so the wildcard is then escaped too:
// it is kept as the raw path and decoded for the path, never escaped a second time.
func callbackPath(wildcard string, escaped bool) (path, rawPath string, err error) {
	if !escaped {
		return "/" + wildcard, "", nil
	}
	p, err := url.PathUnescape(wildcard)
	if err != nil {
		return "", "", badRequest("the callback path is not a valid URL path")
	}
	return "/" + p, "/" + wildcard, nil
}
