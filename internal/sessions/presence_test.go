package sessions

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acp-gateway/gateway/internal/principal"
	"github.com/acp-gateway/gateway/internal/sessions/internal/core"
	"github.com/acp-gateway/gateway/internal/store"
)

// TestPresenceCoalesced: presence changes are published once per PresenceDelay, whatever their number: a
// storm of 40 joins and leaves that ends where it began publishes nothing, 20 joins publish one list (with
// 20 faces), and nothing is published before the delay. Fake time.
func TestPresenceCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := dlRegistry(t, Config{})
		defer func() { _ = r.Shutdown(context.Background()) }()
		s := dlSession(t, r, "")
		root := principal.Principal{ID: "root", Name: "root", Role: principal.RoleAdmin}
		bob := principal.Principal{ID: "bob", Name: "Bob", Role: principal.RoleUser}
		if err := s.ShareAs(root, "bob", store.ShareViewer); err != nil {
			t.Fatal(err)
		}
		time.Sleep(PresenceDelay)
		synctest.Wait()
		v0, _ := core.ControlOf(s).PublishedPresence()

		rootSub, _ := s.AttachAs(root)
		defer rootSub.Detach()
		time.Sleep(PresenceDelay)
		synctest.Wait()
		v1, list := core.ControlOf(s).PublishedPresence()
		if v1 != v0+1 || !slices.Equal(list, []Watcher{{Principal: "root", Name: "root", Role: "admin", Faces: 1}}) {
			t.Fatalf("after root joined: version %d (from %d), %+v", v1, v0, list)
		}

		var subs []*Subscriber
		for range 20 {
			sub, ok := s.AttachAs(bob)
			if !ok {
				t.Fatal("attach refused")
			}
			subs = append(subs, sub)
		}
		for _, sub := range subs {
			sub.Detach()
		}
		time.Sleep(PresenceDelay)
		synctest.Wait()
		if v, _ := core.ControlOf(s).PublishedPresence(); v != v1 {
			t.Fatalf("a storm that ended where it began published %d times", v-v1)
		}

		for range 20 {
			sub, _ := s.AttachAs(bob)
			defer sub.Detach()
		}
		time.Sleep(PresenceDelay - time.Nanosecond)
		synctest.Wait()
		if v, _ := core.ControlOf(s).PublishedPresence(); v != v1 {
			t.Fatal("published before the delay")
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		v2, list := core.ControlOf(s).PublishedPresence()
		want := []Watcher{{Principal: "root", Name: "root", Role: "admin", Faces: 1}, {Principal: "bob", Name: "Bob", Role: "viewer", Faces: 20}}
		if v2 != v1+1 || !slices.Equal(list, want) {
			t.Fatalf("after 20 joins: %d publishes, %+v", v2-v1, list)
		}
	})
}

// TestUnshareLosesSubscribers: ending a share closes Lost of that principal's subscribers only.
func TestUnshareLosesSubscribers(t *testing.T) {
	r := dlRegistry(t, Config{})
	defer func() { _ = r.Shutdown(context.Background()) }()
	s := dlSession(t, r, "")
	root := principal.Principal{ID: "root", Name: "root", Role: principal.RoleAdmin}
	bob := principal.Principal{ID: "bob", Name: "bob", Role: principal.RoleUser}
	_ = s.ShareAs(root, "bob", store.ShareCollaborator)
	bobSub, _ := s.AttachAs(bob)
	defer bobSub.Detach()
	rootSub, _ := s.AttachAs(root)
	defer rootSub.Detach()
	_ = s.ShareAs(root, "bob", store.ShareViewer)
	select {
	case <-bobSub.Lost():
		t.Fatal("a downgrade to viewer lost the view")
	default:
	}
	_ = s.UnshareAs(root, "bob")
	select {
	case <-bobSub.Lost():
	default:
		t.Fatal("bob's subscriber did not lose the session")
	}
	select {
	case <-rootSub.Lost():
		t.Fatal("the admin's subscriber lost the session")
	default:
	}
}
