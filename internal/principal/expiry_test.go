package principal

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestExpiryClosesRevokedAtExp: the Revoked channel of credentials that expire closes at their expiry, not
// before, and EndReason then says they expired; revocable credentials say revoked. Fake time.
func TestExpiryClosesRevokedAtExp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := WithExpiry(context.Background(), time.Now().Add(time.Hour))
		ch := Revoked(ctx)
		if ch == nil || Revoked(ctx) != ch {
			t.Fatal("expiring credentials have no (single) channel")
		}
		time.Sleep(time.Hour - time.Second)
		synctest.Wait()
		select {
		case <-ch:
			t.Fatal("closed before the expiry")
		default:
		}
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-ch:
		default:
			t.Fatal("not closed at the expiry")
		}
		if EndReason(ctx) != ReasonExpired {
			t.Fatalf("reason %q", EndReason(ctx))
		}
		carried := CarryCredentials(context.Background(), ctx)
		if Revoked(carried) != ch {
			t.Fatal("CarryCredentials lost the channel")
		}
		done := make(chan struct{})
		if r := WithRevocation(context.Background(), done); Revoked(r) == nil || EndReason(r) != ReasonRevoked {
			t.Fatal("revocable credentials")
		}
		if Revoked(context.Background()) != nil {
			t.Fatal("credentials that cannot end have a channel")
		}
	})
}
