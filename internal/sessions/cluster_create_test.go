package sessions_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acp-gateway/gateway/internal/sessions"
	"github.com/acp-gateway/gateway/internal/store"
	"github.com/acp-gateway/gateway/internal/store/natstest"
)

// createGateStore holds its registry's directory creates until release is closed, signalling entered first.
type createGateStore struct {
	store.Store
	dir *createGateDir
}

func (g *createGateStore) Dir() store.Directory { return g.dir }

type createGateDir struct {
	store.Directory
	entered chan struct{}
	release chan struct{}
}

func (g *createGateDir) Create(ctx context.Context, e store.DirEntry) (uint64, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.release
	return g.Directory.Create(ctx, e)
}

// TestCreateRoutedWhileShuttingDownLeavesNoSession: b routes a create to a, and shuts down before a answers;
// b answers the caller an error (it can no longer follow the session), so the session a made must not stay.
// It did: it ran on a, listed for alice, though her create had failed.
func TestCreateRoutedWhileShuttingDownLeavesNoSession(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	srv := natstest.Embedded(t)
	workdir := t.TempDir()
	gd := &createGateDir{entered: make(chan struct{}, 1), release: make(chan struct{})}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(gd.release) }) }
	a := newClusterNodeWith(t, srv, workdir, "a", func(st store.Store) store.Store {
		gd.Directory = st.Dir()
		return &createGateStore{Store: st, dir: gd}
	})
	t.Cleanup(release)
	b := newClusterNode(t, srv, workdir, "b")
	eventually(t, "b to see a", func() bool { return len(b.cluster.Nodes()) == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := b.reg.Create(ctx, sessions.CreateOptions{Owner: alice, Node: "a"})
		errc <- err
	}()
	select {
	case <-gd.entered:
	case <-ctx.Done():
		t.Fatal("the create did not reach a")
	}
	shutdownRegistry(t, b.reg) // the gateway's shutdown: its HTTP handlers and its cluster link still run
	release()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		t.Fatal("the create through b did not return")
	}
	if err == nil {
		t.Fatal("a create through a node shutting down succeeded")
	}
	eventually(t, "a to close the session nobody was told of", func() bool { return len(a.reg.ListAs(alice)) == 0 })
}
