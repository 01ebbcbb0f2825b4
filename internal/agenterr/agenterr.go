// Package agenterr makes what an agent says when it fails safe to show people: its JSON-RPC errors and the
// tail of its stderr, redacted and bounded. It holds no session state, so the session core and every face
// clean an agent's words with the same code.
package agenterr

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

// MaxData bounds the part of an agent's error data shown to people: enough for a message such as
// "OPENAI_API_KEY is not set", not a dump.
const MaxData = 2 << 10

// RPCError is an agent's JSON-RPC error, readable for people and still an *acp.RequestError for errors.As.
// Its text carries the error's data, where agents say what is actually wrong (the message is often just
// "Internal error"). Make it with CleanRPC: faces pass the wrapped error's message and data on as they
// are (`/acp` does), so they must already be redacted and bounded; Err is set as it is only for an error
// cleaned before (one a routed command carried).
type RPCError struct{ Err *acp.RequestError }

// CleanRPC wraps an agent's JSON-RPC error with its message and data redacted and bounded.
func CleanRPC(re *acp.RequestError) RPCError {
	c := &acp.RequestError{Code: re.Code, Message: Clip(rawjson.RedactText(strings.ToValidUTF8(re.Message, "\uFFFD")), MaxData)}
	if re.Data != nil {
		c.Data = cleanData(re.Data)
	}
	return RPCError{c}
}

// cleanData is an error's data as clients may see it: small JSON redacted in place, anything larger (or not
// JSON) as clipped, redacted text.
func cleanData(data any) any {
	if b, err := json.Marshal(data); err == nil && len(b) <= MaxData {
		return json.RawMessage(rawjson.ValidUTF8(rawjson.RedactJSON(b)))
	}
	return Data(data)
}

// Clean makes an agent's error safe to show: its JSON-RPC error redacted and bounded; other errors
// pass as they are.
func Clean(err error) error {
	var re *acp.RequestError
	if errors.As(err, &re) {
		return CleanRPC(re)
	}
	return err
}

func (e RPCError) Error() string {
	msg := fmt.Sprintf("agent error %d: %s", e.Err.Code, e.Err.Message)
	if d := Data(e.Err.Data); d != "" {
		msg += ": " + d
	}
	return msg
}
func (e RPCError) Unwrap() error { return e.Err }

// Data renders a JSON-RPC error's data for people: a string as itself, anything else as compact JSON;
// secrets redacted, at most MaxData bytes of valid UTF-8.
func Data(data any) string {
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
	return Clip(rawjson.RedactText(strings.ToValidUTF8(s, "\uFFFD")), MaxData)
}

// Clip cuts s to at most n bytes on a rune boundary, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Exited says that an agent ended while starting: its exit status and the tail of its stderr (redacted,
// bounded), which is where a CLI says what it missed. nil when the agent is still running after a short wait.
func Exited(conn *agents.Conn, wait time.Duration) error {
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
	if tail := StderrTail(conn.Stderr()); tail != "" {
		msg += ": " + tail
	}
	return errors.New(msg)
}

// StderrTail is the end of an agent's stderr for people: redacted as a whole first (a cut could split a key
// from the words that mark it, "Bearer" or a PEM header), then the last MaxData bytes from a line's start.
func StderrTail(stderr string) string {
	s := strings.TrimSpace(rawjson.RedactText(strings.ToValidUTF8(stderr, "\uFFFD")))
	if len(s) <= MaxData {
		return s
	}
	s = lastBytes(s, MaxData)
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
