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
	"github.com/acp-gateway/gateway/internal/translate/rawjson"
	acp "github.com/coder/acp-go-sdk"
)

// maxErrorData bounds the part of an agent's error data shown to people: enough for a message such as
// "OPENAI_API_KEY is not set", not a dump.
const maxErrorData = 2 << 10

// rpcError is an agent's JSON-RPC error, readable for people and still an *acp.RequestError for errors.As.
// Its text carries the error's data, where agents say what is actually wrong (the message is often just
// "Internal error"). Make it with cleanRPCError: faces pass the wrapped error's message and data on as they
// are (`/acp` does), so they must already be redacted and bounded.
type rpcError struct{ re *acp.RequestError }

// cleanRPCError wraps an agent's JSON-RPC error with its message and data redacted and bounded.
func cleanRPCError(re *acp.RequestError) rpcError {
	c := &acp.RequestError{Code: re.Code, Message: clip(rawjson.RedactText(strings.ToValidUTF8(re.Message, "\uFFFD")), maxErrorData)}
	if re.Data != nil {
		c.Data = cleanData(re.Data)
	}
	return rpcError{c}
}

// cleanData is an error's data as clients may see it: small JSON redacted in place, anything larger (or not
// JSON) as clipped, redacted text.
func cleanData(data any) any {
	if b, err := json.Marshal(data); err == nil && len(b) <= maxErrorData {
		return json.RawMessage(rawjson.ValidUTF8(rawjson.RedactJSON(b)))
	}
	return errorData(data)
}

// cleanAgentError makes an agent's error safe to show: its JSON-RPC error redacted and bounded; other errors
// pass as they are.
func cleanAgentError(err error) error {
	var re *acp.RequestError
	if errors.As(err, &re) {
		return cleanRPCError(re)
	}
	return err
}

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
	return clip(rawjson.RedactText(strings.ToValidUTF8(s, "\uFFFD")), maxErrorData)
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
	if tail := stderrTail(conn.Stderr()); tail != "" {
		msg += ": " + tail
	}
	return errors.New(msg)
}

// stderrTail is the end of an agent's stderr for people: redacted as a whole first (a cut could split a key
// from the words that mark it, "Bearer" or a PEM header), then the last maxErrorData bytes from a line's start.
func stderrTail(stderr string) string {
	s := strings.TrimSpace(rawjson.RedactText(strings.ToValidUTF8(stderr, "\uFFFD")))
	if len(s) <= maxErrorData {
		return s
	}
	s = lastBytes(s, maxErrorData)
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		s = s[i+1:] // a partial first line could be the unmarked end of a secret
	}
	return s
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
