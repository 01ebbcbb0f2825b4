package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/acp-gateway/gateway/internal/principal"
)

// hashToken is `gateway hash-token`: it reads a token on stdin (one line; the newline is not part of it) and
// prints the hex SHA-256 a users file holds, so the token itself is never written to a file.
func hashToken(in io.Reader, out io.Writer) error {
	b, err := io.ReadAll(io.LimitReader(in, 64<<10))
	if err != nil {
		return err
	}
	tok := strings.TrimRight(string(b), "\r\n")
	if strings.ContainsAny(tok, "\r\n") {
		return errors.New("hash-token: give one token on one line")
	}
	if tok == "" {
		return errors.New("hash-token: no token on stdin (e.g. openssl rand -hex 32 | tee token | gateway hash-token)")
	}
	if err := checkToken(tok); err != nil {
		return fmt.Errorf("hash-token: %v", err)
	}
	_, err = fmt.Fprintln(out, principal.HashToken(tok))
	return err
}
