package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acp-gateway/gateway/internal/agents"
	"github.com/acp-gateway/gateway/internal/translate"
	acp "github.com/coder/acp-go-sdk"
)

// maxErrorData bounds the part of an agent's error data shown to people: enough for a message such as
// "OPENAI_API_KEY is not set", not a dump.
const maxErrorData = 2 << 10

// rpcError is an agent's JSON-RPC error, readable for people and still an *acp.RequestError for errors.As.
// Its text carries the error's data, where agents say what is actually wrong (the message is often just
// "Internal error").
type rpcError struct{ re *acp.RequestError }

func (e rpcError) Error() string {
	msg := fmt.Sprintf("agent error %d: %s", e.re.Code, e.re.Message)
	if d := errorData(e.re.Data); d != "" {
		msg += ": " + d
	}
	return msg
}
func (e rpcError) Unwrap() error { return e.re }

// errorData renders a JSON-RPC error's data for people: a string as itself, anything else as compact JSON;
// secrets redacted, at most maxErrorData bytes of valid UTF-8.
func errorData(data any) string {
	if data == nil {
		return ""
	}
	s, ok := data.(string)
	if !ok {
		b, err := json.Marshal(data)
		if err != nil {
			return ""
		}
		s = string(b)
	}
	return clip(translate.RedactText(strings.ToValidUTF8(s, "\uFFFD")), maxErrorData)
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// exitedError says that an agent ended while starting: its exit status and the tail of its stderr (redacted,
// bounded), which is where a CLI says what it missed. nil when the agent is still running after a short wait.
func exitedError(conn *agents.Conn, wait time.Duration) error {
	select {
	case <-conn.Done():
	default:
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-conn.Exited():
	case <-t.C:
		return nil
	}
	msg := "agent exited"
	var ee *exec.ExitError
	switch err := conn.ExitErr(); {
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		msg = fmt.Sprintf("agent exited with status %d", ee.ExitCode())
	case err != nil:
		msg = "agent exited: " + err.Error()
	}
	if tail := strings.TrimSpace(conn.Stderr()); tail != "" {
		msg += ": " + errorData(lastBytes(tail, maxErrorData))
	}
	return errors.New(msg)
}

// lastBytes is the end of s, at most n bytes, starting on a rune boundary.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
