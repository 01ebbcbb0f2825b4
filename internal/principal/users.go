package principal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// ErrRevoked is the cause a revoked principal's requests and sockets end with.
var ErrRevoked = errors.New("credentials revoked")

// usersFile is the shape of --users: names, roles and the SHA-256 of each token, never a token itself.
type usersFile struct {
	Users []struct {
		Name        string `json:"name"`
		Role        string `json:"role"`
		TokenSha256 string `json:"tokenSha256"`
	} `json:"users"`
}

// user is one entry of the users file with its revocation context.
type user struct {
	// Static after construction.
	p        Principal
	digest   [32]byte
	hasToken bool               // false: the user only arrives through a trusted proxy's header
	live     context.Context    // ends when the entry is removed or changed by a reload
	revoke   context.CancelFunc // ends live
}

// Users is the users file, reloaded by Reload (SIGHUP). A reload keeps the entries that did not change; a
// removed or changed entry is revoked: its requests and sockets end (Live).
type Users struct {
	// Static after construction.
	path string

	mu    sync.Mutex
	users []*user // Guarded by mu; replaced whole by Reload.
}

// OpenUsers reads the users file at path.
func OpenUsers(path string) (*Users, error) {
	u := &Users{path: path}
	if _, err := u.Reload(); err != nil {
		return nil, err
	}
	return u, nil
}

// Reload reads the file again and returns the names of the users it revoked. A file that does not parse
// changes nothing.
func (u *Users) Reload() (revoked []string, err error) {
	next, err := readUsers(u.path)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	old := u.users
	for i, n := range next {
		for _, o := range old {
			if o.p == n.p && o.digest == n.digest && o.hasToken == n.hasToken {
				n.revoke()  // never handed out
				next[i] = o // unchanged: its requests and sockets go on
			}
		}
	}
	u.users = next
	u.mu.Unlock()
	for _, o := range old {
		kept := false
		for _, n := range next {
			kept = kept || n == o
		}
		if !kept {
			o.revoke()
			revoked = append(revoked, o.p.Name)
		}
	}
	return revoked, nil
}

func readUsers(path string) ([]*user, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("users file: %v", err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf(`users file %s is empty: want {"users": [{"name", "role", "tokenSha256"}]}`, path)
	}
	var f usersFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields() // a "token" member would be a secret in the wrong place: refuse it
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("users file %s: %v", path, err)
	}
	out := make([]*user, 0, len(f.Users))
	seen := map[string]bool{}
	digests := map[[32]byte]string{}
	for i, e := range f.Users {
		if err := CheckLocalName(e.Name); err != nil {
			return nil, fmt.Errorf("users file %s: users[%d]: name %q: %v", path, i, e.Name, err)
		}
		if seen[e.Name] {
			return nil, fmt.Errorf("users file %s: user %q is listed twice", path, e.Name)
		}
		seen[e.Name] = true
		role, err := ParseRole(e.Role)
		if err != nil {
			return nil, fmt.Errorf("users file %s: user %q: %v", path, e.Name, err)
		}
		us := &user{p: Principal{ID: e.Name, Name: e.Name, Role: role}}
		if e.TokenSha256 != "" {
			d, err := hex.DecodeString(e.TokenSha256)
			if err != nil || len(d) != sha256.Size {
				return nil, fmt.Errorf("users file %s: user %q: tokenSha256 must be 64 hex digits (gateway hash-token prints it)", path, e.Name)
			}
			copy(us.digest[:], d)
			us.hasToken = true
			if other, dup := digests[us.digest]; dup {
				return nil, fmt.Errorf("users file %s: users %q and %q have the same token: a token names one user", path, other, e.Name)
			}
			digests[us.digest] = e.Name
		}
		us.live, us.revoke = context.WithCancel(context.Background())
		out = append(out, us)
	}
	return out, nil
}

// ByToken finds the user whose token hashes to token's digest. Every entry is compared, in constant time,
// so the time taken says nothing about which digest came close. live ends when the entry is revoked.
func (u *Users) ByToken(token string) (p Principal, live context.Context, ok bool) {
	d := sha256.Sum256([]byte(token))
	u.mu.Lock()
	defer u.mu.Unlock()
	var found *user
	for _, e := range u.users {
		if subtle.ConstantTimeCompare(d[:], e.digest[:])&boolInt(e.hasToken) == 1 {
			found = e
		}
	}
	if found == nil {
		return Principal{}, nil, false
	}
	return found.p, found.live, true
}

// ByName finds a user by name (a trusted proxy's header names it).
func (u *Users) ByName(name string) (p Principal, live context.Context, ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, e := range u.users {
		if e.p.Name == name {
			return e.p, e.live, true
		}
	}
	return Principal{}, nil, false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// HashToken is what a users file holds for token: its SHA-256 in hex.
func HashToken(token string) string {
	d := sha256.Sum256([]byte(token))
	return hex.EncodeToString(d[:])
}
