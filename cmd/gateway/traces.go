package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/acp-gateway/gateway/internal/telemetry"
)

// startTraces sets up OpenTelemetry traces from the OTEL_* variables (off unless they name an exporter or
// an endpoint) and returns the tracer (nil when off) and a stop that flushes the spans still buffered.
func startTraces(ctx context.Context, getenv func(string) string, logger *slog.Logger, timeout time.Duration) (*telemetry.Tracer, func(), error) {
	tracer, shutdown, err := telemetry.Setup(ctx, getenv, build.Version, logger)
	if err != nil {
		return nil, nil, err
	}
	if tracer == nil {
		return nil, func() {}, nil
	}
	logger.Info("traces on: exporting OTLP", "protocol", telemetry.Protocol(getenv), "endpoint", traceEndpoint(getenv))
	return tracer, func() {
		sctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			logger.Warn("traces: the last spans were not exported", "err", err)
		}
	}, nil
}

// traceEndpoint is the OTLP endpoint the variables name, for the start-up log ("" = the exporter's default).
func traceEndpoint(getenv func(string) string) string {
	if e := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); e != "" {
		return e
	}
	if e := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); e != "" {
		return e
	}
	if telemetry.Protocol(getenv) == "grpc" {
		return "http://localhost:4317"
	}
	return "http://localhost:4318"
}
