package inproc

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// The helpers below are answers the in-process agents give alike; they live here so the agents cannot
// drift apart on the wire.

// UnknownSession is the error for a session id the connection never created (ACP's "Resource not found").
func UnknownSession(id acp.SessionId) error {
	return &acp.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"sessionId": string(id)}}
}

// NewSessionID returns prefix, "_" and 16 random hex digits.
func NewSessionID(prefix string) acp.SessionId {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return acp.SessionId(prefix + "_" + hex.EncodeToString(b[:]))
}

// PromptText is the concatenation of the prompt's text blocks, joined with "\n". Other blocks (images,
// links, resources) are ignored.
func PromptText(blocks []acp.ContentBlock) string {
	var parts []string
	for _, b := range blocks {
		if b.Text != nil {
			parts = append(parts, b.Text.Text)
		}
	}
	return strings.Join(parts, "\n")
}
