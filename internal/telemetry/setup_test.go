package telemetry

import (
	"context"
	"io"
	"log/slog"
	"testing"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestSetupOffByDefault: no OTEL_* variable, OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true is no tracer.
func TestSetupOffByDefault(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"OTEL_SERVICE_NAME": "x", "OTEL_TRACES_SAMPLER": "always_on"},
		{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
		{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"},
	} {
		tr, stop, err := Setup(context.Background(), envOf(env), "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil || tr != nil {
			t.Errorf("%v: tracer %v err %v, want off", env, tr, err)
		}
		if err := stop(context.Background()); err != nil {
			t.Errorf("%v: stop: %v", env, err)
		}
	}
}

// TestSetupRefusesWhatItCannotDo: each unsupported setting is refused with a message naming the variable.
func TestSetupRefusesWhatItCannotDo(t *testing.T) {
	ep := "http://127.0.0.1:4318"
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, `OTEL_TRACES_EXPORTER "zipkin": want otlp or none (this gateway exports traces over OTLP only)`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ep, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, `OTEL_EXPORTER_OTLP_PROTOCOL "http/json": want http/protobuf or grpc (http/json is not built in)`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ep, "OTEL_TRACES_SAMPLER": "sometimes"}, `OTEL_TRACES_SAMPLER "sometimes": want always_on, always_off, traceidratio or their parentbased_ forms`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ep, "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, `OTEL_TRACES_SAMPLER_ARG "2": want a ratio from 0 to 1`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ep, "OTEL_RESOURCE_ATTRIBUTES": "team"}, `OTEL_RESOURCE_ATTRIBUTES: "team" is not key=value`},
	} {
		_, _, err := Setup(context.Background(), envOf(c.env), "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: err %v, want %q", c.env, err, c.want)
		}
	}
}

// TestSetupOn: an endpoint turns traces on; the shutdown returns (nothing was recorded, nothing to send).
func TestSetupOn(t *testing.T) {
	tr, stop, err := Setup(context.Background(), envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=test,team=a%20b",
	}), "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil || tr == nil {
		t.Fatalf("tracer %v err %v, want on", tr, err)
	}
	if err := stop(context.Background()); err != nil {
		t.Fatalf("stop: %v", err)
	}
}
