package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// DefaultServiceName is service.name when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one.
const DefaultServiceName = "acp-gateway"

// Setup reads the standard OTEL_* variables through getenv and, when they ask for traces, returns a Tracer
// exporting OTLP (HTTP or gRPC) and the shutdown that flushes it. Traces are off unless OTEL_TRACES_EXPORTER is
// "otlp" or an OTLP endpoint is set; off is a nil Tracer and a shutdown that does nothing.
func Setup(ctx context.Context, getenv func(string) string, version string, logger *slog.Logger) (*Tracer, func(context.Context) error, error) {
	off := func(context.Context) error { return nil }
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, off, nil
	}
	tracesEndpoint := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	endpoint := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return nil, off, nil
	case "":
		if tracesEndpoint == "" && endpoint == "" {
			return nil, off, nil // off by default: the SDK's default exporter would be otlp to localhost
		}
	case "otlp":
	default:
		return nil, nil, fmt.Errorf("OTEL_TRACES_EXPORTER %q: want otlp or none (this gateway exports traces over OTLP only)", exp)
	}
	sampler, err := samplerFrom(getenv)
	if err != nil {
		return nil, nil, err
	}
	exp, err := newExporter(ctx, getenv, tracesEndpoint, endpoint)
	if err != nil {
		return nil, nil, err
	}
	res, err := resourceFrom(ctx, getenv, version)
	if err != nil {
		return nil, nil, err
	}
	// The batch processor reads OTEL_BSP_*; exporting never waits in a request or an agent's update.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithSampler(sampler))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("traces: export failed", "err", err)
	}))
	return newTracer(tp.Tracer(instrumentation, trace.WithInstrumentationVersion(version))), tp.Shutdown, nil
}

const instrumentation = "github.com/acp-gateway/gateway/internal/telemetry"

// Protocol is the OTLP transport OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL names; "" is http/protobuf.
func Protocol(getenv func(string) string) string {
	if p := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")); p != "" {
		return p
	}
	if p := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")); p != "" {
		return p
	}
	return "http/protobuf"
}

// newExporter is the OTLP exporter of the protocol the variables name. Headers, timeout, compression and
// certificates (OTEL_EXPORTER_OTLP_*) the exporter reads itself.
func newExporter(ctx context.Context, getenv func(string) string, tracesEndpoint, endpoint string) (sdktrace.SpanExporter, error) {
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch proto := Protocol(getenv); proto {
	case "http/protobuf":
		var opts []otlptracehttp.Option
		switch {
		case tracesEndpoint != "":
			opts = append(opts, otlptracehttp.WithEndpointURL(tracesEndpoint)) // the signal's own URL is used as is
		case endpoint != "":
			opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimSuffix(endpoint, "/")+"/v1/traces"))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	case "grpc":
		var opts []otlptracegrpc.Option
		switch { // gRPC has no path: both name the collector's address
		case tracesEndpoint != "":
			opts = append(opts, otlptracegrpc.WithEndpointURL(tracesEndpoint))
		case endpoint != "":
			opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint))
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: want http/protobuf or grpc (http/json is not built in)", proto)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %v", err)
	}
	return exp, nil
}

// resourceFrom names the service: OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES' service.name, else
// DefaultServiceName; the other OTEL_RESOURCE_ATTRIBUTES are kept.
func resourceFrom(ctx context.Context, getenv func(string) string, version string) (*resource.Resource, error) {
	attrs := getenv("OTEL_RESOURCE_ATTRIBUTES")
	name := strings.TrimSpace(getenv("OTEL_SERVICE_NAME"))
	if name == "" && !strings.Contains(attrs, "service.name=") {
		name = DefaultServiceName
	}
	opts := []resource.Option{resource.WithAttributes(semconv.ServiceVersion(version))}
	if attrs != "" {
		kvs, err := parseResourceAttributes(attrs)
		if err != nil {
			return nil, err
		}
		opts = append(opts, resource.WithAttributes(kvs...))
	}
	if name != "" {
		opts = append(opts, resource.WithAttributes(semconv.ServiceName(name)))
	}
	res, err := resource.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %v", err)
	}
	return res, nil
}

// samplerFrom is OTEL_TRACES_SAMPLER with OTEL_TRACES_SAMPLER_ARG; unset is parentbased_always_on, so a
// client's sampled traceparent is kept and an unsampled one is not.
func samplerFrom(getenv func(string) string) (sdktrace.Sampler, error) {
	name := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER"))
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := 1.0
	if strings.HasSuffix(name, "traceidratio") && arg != "" {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG %q: want a ratio from 0 to 1", arg)
		}
		ratio = r
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER %q: want always_on, always_off, traceidratio or their parentbased_ forms", name)
}

// parseResourceAttributes reads OTEL_RESOURCE_ATTRIBUTES: comma-separated key=value pairs, values
// percent-encoded.
func parseResourceAttributes(s string) ([]attribute.KeyValue, error) {
	var kvs []attribute.KeyValue
	for _, pair := range strings.Split(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %q is not key=value", pair)
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %q: %v", pair, err)
		}
		kvs = append(kvs, attribute.String(k, val))
	}
	return kvs, nil
}
