// Package promptkey digests a keyed prompt (its sender with the idempotency key, and the prompt) as a
// session's log records it, so a retried prompt is known on any node. It holds no session state: the
// session keeps its recent keys with the turns they started.
package promptkey

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"

	"github.com/acp-gateway/gateway/internal/principal"
)

// Key is a keyed prompt as the log records it: digests of who sent it with its key, and of the prompt.
// The key is scoped to its sender: another principal's equal key is another key.
type Key struct {
	Key    string `json:"key"`
	Prompt string `json:"prompt"`
}

// New digests key (none: "") sent by who with blocks.
func New(who principal.Principal, key string, blocks []json.RawMessage) Key {
	if key == "" {
		return Key{}
	}
	k := sha256.Sum256([]byte(who.ID + "\x00" + key))
	p := sha256.New()
	var buf bytes.Buffer
	for _, b := range blocks {
		buf.Reset()
		if json.Compact(&buf, b) != nil {
			buf.Write(b) // sessions.ParsePrompt accepted it: this does not happen
		}
		p.Write(buf.Bytes())
		p.Write([]byte{'\n'})
	}
	return Key{Key: digest(k[:]), Prompt: digest(p.Sum(nil))}
}

// digest is 128 bits of a hash as 22 characters of base64url.
func digest(sum []byte) string { return base64.RawURLEncoding.EncodeToString(sum[:16]) }
