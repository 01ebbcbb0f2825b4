package jsstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acp-gateway/gateway/internal/principal"
)

// TicketTTL is how long a WebSocket ticket may wait for its redemption, as on one node.
const TicketTTL = 30 * time.Second

// ErrTicketInvalid is a ticket that is unknown, used, expired or bound to another session.
var ErrTicketInvalid = errors.New("jsstore: invalid ticket")

// Tickets are single-use WebSocket tickets in a KV bucket with a TTL, so one minted on one node is redeemed
// on any other. The key is the ticket's SHA-256, so reading the bucket yields no usable ticket; a redemption
// deletes the key guarded by the revision it read, so exactly one redemption wins.
type Tickets struct {
	// Static after construction.
	kv     jetstream.KeyValue
	nc     *nats.Conn
	bucket string
}

// TicketGrant is what a ticket carries: whose stream it opens and, if bound, which session's.
type TicketGrant struct {
	Session   string              `json:"session,omitempty"` // "" = any stream
	Principal principal.Principal `json:"principal"`
	Expires   time.Time           `json:"expires"`
	// Via and Until are how the principal was identified and when that credential expires (zero = never):
	// the redeeming node checks them against its own configuration.
	Via   string    `json:"via,omitempty"`
	Until time.Time `json:"until,omitzero"`
}

// Tickets opens the tickets bucket (TTL TicketTTL).
func (s *Store) Tickets(ctx context.Context) (*Tickets, error) {
	kv, err := s.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:   s.opts.ticketsBucket(),
		History:  1,
		TTL:      TicketTTL,
		Storage:  jetstream.FileStorage,
		Replicas: s.opts.Replicas,
	})
	if err == nil && s.opts.Replicas > 1 {
		err = waitLeaders(ctx, s.js, "KV_"+s.opts.ticketsBucket())
	}
	if err != nil {
		return nil, fmt.Errorf("jsstore: bucket %s: %w", s.opts.ticketsBucket(), err)
	}
	return &Tickets{kv: kv, nc: s.nc, bucket: s.opts.ticketsBucket()}, nil
}

// Mint issues a ticket for who, bound to session unless it is "", valid for TicketTTL.
func (t *Tickets) Mint(ctx context.Context, session string, who principal.Principal) (string, time.Time, error) {
	return t.MintGrant(ctx, TicketGrant{Session: session, Principal: who})
}

// MintGrant issues a ticket carrying g, valid for TicketTTL (g.Expires is set here).
func (t *Tickets) MintGrant(ctx context.Context, g TicketGrant) (string, time.Time, error) {
	var b [24]byte
	_, _ = rand.Read(b[:])
	token := base64.RawURLEncoding.EncodeToString(b[:])
	g.Expires = time.Now().Add(TicketTTL)
	value, err := json.Marshal(g)
	if err != nil {
		return "", time.Time{}, err
	}
	if _, err := t.kv.Create(ctx, ticketKey(token), value); err != nil {
		return "", time.Time{}, fmt.Errorf("jsstore: mint ticket: %w", err)
	}
	return token, g.Expires, nil
}

// Redeem uses up token for a stream of session ("" = not a session's stream) and returns its grant. As on one
// node, a ticket presented for another session is used up too: single use means one presentation. Whether
// the principal was revoked since is the caller's check. The ticket is read from the bucket's stream leader
// (leaderGet): one minted a moment ago through another server is there.
func (t *Tickets) Redeem(ctx context.Context, token, session string) (TicketGrant, error) {
	key := ticketKey(token)
	kve, err := leaderGet(ctx, t.nc, t.bucket, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return TicketGrant{}, ErrTicketInvalid
	}
	if err != nil {
		return TicketGrant{}, fmt.Errorf("jsstore: redeem ticket: %w", err)
	}
	err = t.kv.Delete(ctx, key, jetstream.LastRevision(kve.Revision()))
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return TicketGrant{}, ErrTicketInvalid // another redemption won
	}
	if err != nil {
		return TicketGrant{}, fmt.Errorf("jsstore: redeem ticket: %w", err)
	}
	var g TicketGrant
	if json.Unmarshal(kve.Value(), &g) != nil || time.Now().After(g.Expires) || (g.Session != "" && g.Session != session) {
		return TicketGrant{}, ErrTicketInvalid
	}
	return g, nil
}

func ticketKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
