package telemetry

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// grpcReceiver is an in-process OTLP/gRPC collector that keeps the names of the spans it receives.
type grpcReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string // Guarded by mu.
}

func (g *grpcReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				g.names = append(g.names, sp.GetName())
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// TestSetupGRPC: OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports to an OTLP/gRPC collector at the endpoint's
// address; the shutdown flushes.
func TestSetupGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc := &grpcReceiver{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, rc)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()
	tr, stop, err := Setup(context.Background(), envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + ln.Addr().String(), "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
	}), "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil || tr == nil {
		t.Fatalf("tracer %v err %v", tr, err)
	}
	_, sp := tr.StartCreateAgent(context.Background(), "demo", "s1")
	sp.End(nil)
	if err := stop(context.Background()); err != nil {
		t.Fatalf("stop: %v", err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.names) != 1 || rc.names[0] != "create_agent demo" {
		t.Fatalf("the collector got %q, want the create_agent span", rc.names)
	}
}
