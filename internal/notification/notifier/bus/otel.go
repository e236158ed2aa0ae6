package bus

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// otelTracerName is the instrumentation scope of the spans; Flux's.
const otelTracerName = "flux:notification-controller"

// otelTracer sends each event as one span, over OTLP/HTTP (protobuf), to
// address: the full URL of the collector's traces endpoint, e.g.
// http://collector:4318/v1/traces.
//
// The spans of one Alert and one revision share a trace: its ID is derived
// from the Alert's UID and the revision (the root Kustomization's, when one
// applied the object), the span's from the object's UID and its revision,
// so a collector sees the same IDs for the same change whichever
// controller reports it, and a span's parent is the span of the object's
// Kustomization or source (lineage).
type otelTracer struct {
	opts    notifier.Options
	headers map[string]string
}

func newOTel(o notifier.Options) (notifier.Notifier, error) {
	if err := need(o, "an address (the OTLP/HTTP traces URL)", o.Address); err != nil {
		return nil, err
	}
	if err := need(o, "the Alert it delivers for", o.Alert.UID); err != nil {
		return nil, err
	}
	return &otelTracer{opts: o, headers: otelHeaders(o)}, nil
}

// otelHeaders are the Secret's headers, with an Authorization header from
// its username and password when the headers set none: basic with both,
// the password as a bearer token without a username.
func otelHeaders(o notifier.Options) map[string]string {
	h := make(map[string]string, len(o.Headers)+1)
	for k, v := range o.Headers {
		h[k] = v
	}
	if _, ok := h["Authorization"]; ok || o.Password == "" {
		return h
	}
	if o.Username == "" {
		h["Authorization"] = "Bearer " + o.Password
	} else {
		h["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte(o.Username+":"+o.Password))
	}
	return h
}

func (t *otelTracer) Post(ctx context.Context, e events.Event) error {
	// HelmRepository events start no deployment: Flux leaves them out of
	// its traces.
	if e.InvolvedObject.Kind == "HelmRepository" {
		return nil
	}
	return notifier.Scrub(t.post(ctx, e), t.secrets())
}

// secrets are the credentials and every header value: collectors take
// API keys in headers of their own naming (X-Honeycomb-Team, DD-API-KEY).
func (t *otelTracer) secrets() []string {
	s := secrets(t.opts)
	for _, v := range t.headers {
		if v != "" {
			s = append(s, v)
		}
	}
	return s
}

func (t *otelTracer) post(ctx context.Context, e events.Event) (err error) {
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(t.opts.Address), otlptracehttp.WithHeaders(t.headers)}
	if t.opts.HTTPClient != nil {
		opts = append(opts, otlptracehttp.WithHTTPClient(t.opts.HTTPClient))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return fmt.Errorf("building the OTLP exporter: %w", err)
	}
	defer func() {
		if serr := exp.Shutdown(ctx); serr != nil && err == nil {
			err = fmt.Errorf("closing the OTLP exporter: %w", serr)
		}
	}()
	rev, parent := lineage(ctx, t.opts.Reader, e)
	spans := traceEvent(t.opts.Alert, e, rev, parent)
	if err := exp.ExportSpans(ctx, spans); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("exporting span to %s: timed out", notifier.Host(t.opts.Address))
		}
		return fmt.Errorf("exporting span to %s: %w", notifier.Host(t.opts.Address), err)
	}
	return nil
}

// traceEvent records e as one ended span of the Alert's service, to be
// exported by the caller, which then knows whether the collector took it
// (a batching processor would drop the error).
func traceEvent(a notifier.AlertRef, e events.Event, traceRev string, parent *node) []sdktrace.ReadOnlySpan {
	rec := &recorder{}
	tid := traceID(a.UID, traceRev)
	ctx := context.Background()
	if parent != nil {
		ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: tid, SpanID: spanID(parent.uid, parent.revision), TraceFlags: trace.FlagsSampled, Remote: true,
		}))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(rec),
		sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL,
			semconv.ServiceName(a.Namespace+"/"+a.Name),
			semconv.ServiceNamespace(a.Namespace),
			semconv.ServiceInstanceID(a.UID),
		)),
		sdktrace.WithIDGenerator(fixedIDs{
			trace: tid, span: spanID(string(e.InvolvedObject.UID), traceRevision(e)),
		}),
	)
	o := e.InvolvedObject
	attrs := []attribute.KeyValue{
		attribute.String("object.uid", string(o.UID)),
		attribute.String("object.kind", o.Kind),
		attribute.String("object.name", o.Name),
		attribute.String("object.namespace", o.Namespace),
	}
	keys := make([]string, 0, len(e.Metadata))
	for k := range e.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		attrs = append(attrs, attribute.String(k, e.Metadata[k]))
	}
	_, span := tp.Tracer(otelTracerName).Start(ctx,
		o.Kind+": "+o.Namespace+"/"+o.Name,
		trace.WithAttributes(attrs...), trace.WithTimestamp(e.Timestamp))
	if e.Severity == events.SeverityError {
		span.SetStatus(codes.Error, e.Message)
	} else {
		span.SetStatus(codes.Ok, e.Message)
	}
	span.End()
	return rec.spans()
}

// traceRevision is the revision the event's trace is keyed on: the
// source's revision when the event names it, an OCI artifact's
// "<version>@<digest>", else the object's revision, else "unknown".
func traceRevision(e events.Event) string {
	rev, ok := e.Metadata["revision"]
	if !ok {
		return "unknown"
	}
	if r, ok := e.Metadata["source-revision"]; ok {
		return r
	}
	digest, okDigest := e.Metadata["oci-digest"]
	version, okVersion := e.Metadata["app-version"]
	if okDigest && okVersion {
		return version + "@" + digest
	}
	return rev
}

// traceID and spanID are the first bytes of SHA-256("<uid>:<revision>").
func traceID(uid, rev string) trace.TraceID {
	var id trace.TraceID
	sum := sha256.Sum256([]byte(uid + ":" + rev))
	copy(id[:], sum[:len(id)])
	return id
}

func spanID(uid, rev string) trace.SpanID {
	var id trace.SpanID
	sum := sha256.Sum256([]byte(uid + ":" + rev))
	copy(id[:], sum[:len(id)])
	return id
}

// fixedIDs hands out the IDs computed for the one span of a delivery.
type fixedIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

func (f fixedIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID)  { return f.trace, f.span }
func (f fixedIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return f.span }

// recorder keeps the spans that ended.
type recorder struct {
	mu    sync.Mutex
	ended []sdktrace.ReadOnlySpan
}

func (r *recorder) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (r *recorder) OnEnd(s sdktrace.ReadOnlySpan) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, s)
}
func (r *recorder) Shutdown(context.Context) error   { return nil }
func (r *recorder) ForceFlush(context.Context) error { return nil }

func (r *recorder) spans() []sdktrace.ReadOnlySpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sdktrace.ReadOnlySpan(nil), r.ended...)
}
