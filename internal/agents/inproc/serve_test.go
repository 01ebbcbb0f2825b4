package inproc

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	acp "github.com/coder/acp-go-sdk"
)

// testAgent implements only Initialize; the tests send nothing else. It does what the real agents do:
// Initialize runs inside work and, when block is set, waits for Stop.
type testAgent struct {
	acp.Agent // nil: any other method panics

	work    Tracker
	conn    *acp.AgentSideConnection // set by Attach
	stopped chan struct{}            // closed by Stop
	stops   atomic.Int32

	block   bool
	entered chan struct{} // receives once Initialize has entered work
	left    atomic.Bool   // Initialize has left work
	sawConn atomic.Bool   // Initialize saw the attached connection
}

func newTestAgent() *testAgent {
	return &testAgent{stopped: make(chan struct{}), entered: make(chan struct{}, 1)}
}

func (a *testAgent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	if !a.work.Enter() {
		return acp.InitializeResponse{}, errors.New("shutting down")
	}
	defer a.work.Leave()
	a.sawConn.Store(a.conn != nil)
	a.entered <- struct{}{}
	if a.block {
		<-a.stopped
	}
	defer a.left.Store(true)
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber}, nil
}

func (a *testAgent) hooks() Agent {
	return Agent{
		Name:    "test",
		Handler: a,
		Attach:  func(c *acp.AgentSideConnection) { a.conn = c },
		Stop: func() {
			if a.stops.Add(1) == 1 {
				close(a.stopped)
			}
		},
		Work: &a.work,
	}
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n"

func TestServeReturnsNilOnEOF(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newTestAgent()
		if err := Serve(context.Background(), strings.NewReader(initialize), io.Discard, a.hooks()); err != nil {
			t.Errorf("Serve = %v, want nil", err)
		}
		if n := a.stops.Load(); n != 1 {
			t.Errorf("Stop called %d times, want 1", n)
		}
		if a.conn == nil {
			t.Error("Attach not called")
		}
		if a.work.Enter() {
			t.Error("work accepted after Serve returned")
		}
	})
}

func TestServeWaitsForWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newTestAgent()
		a.block = true
		inR, inW := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- Serve(context.Background(), inR, io.Discard, a.hooks()) }()
		if _, err := io.WriteString(inW, initialize); err != nil {
			t.Fatal(err)
		}
		<-a.entered
		if !a.sawConn.Load() {
			t.Error("the handler ran before Attach")
		}
		_ = inW.Close() // EOF: Serve stops the agent, which releases Initialize
		if err := <-done; err != nil {
			t.Errorf("Serve = %v, want nil", err)
		}
		if !a.left.Load() {
			t.Error("Serve returned while the handler was still running")
		}
	})
}

func TestServeStopsWhenContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		a := newTestAgent()
		a.block = true
		inR, inW := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- Serve(ctx, inR, io.Discard, a.hooks()) }()
		if _, err := io.WriteString(inW, initialize); err != nil {
			t.Fatal(err)
		}
		<-a.entered
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
		// Serve closed in to stop the SDK's reader.
		if _, err := io.WriteString(inW, initialize); !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("write after Serve = %v, want io.ErrClosedPipe", err)
		}
	})
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestServeReportsReadError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		if err := Serve(context.Background(), failingReader{boom}, io.Discard, newTestAgent().hooks()); !errors.Is(err, boom) {
			t.Errorf("Serve = %v, want %v", err, boom)
		}
	})
}

func TestServeReportsClosedEarly(t *testing.T) {
	// A line longer than the SDK's 10 MiB limit stops its reader although the input has not failed.
	long := strings.NewReader(strings.Repeat("x", 11<<20))
	err := Serve(context.Background(), long, io.Discard, newTestAgent().hooks())
	if !errors.Is(err, ErrClosedEarly) || err.Error() != "test: ACP connection closed before end of input" {
		t.Errorf("Serve = %v, want %q", err, "test: "+ErrClosedEarly.Error())
	}
}
