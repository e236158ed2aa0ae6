package incident

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/getsentry/sentry-go"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// sentryNotifier sends events to the Sentry project whose DSN is the
// Provider's address, through Sentry's Go SDK, as Flux does: error events
// as error events, info events as transactions, which show how often and
// when reconciliations run without raising alerts. spec.channel is the
// environment.
//
// Flux leaves delivery to the SDK's background transport and never hears
// whether Sentry took the event; here the SDK sends synchronously through
// the Provider's client, and a refusal is an error like any other type's.
type sentryNotifier struct {
	opts notifier.Options
}

func newSentry(o notifier.Options) (notifier.Notifier, error) {
	if o.Address == "" {
		return nil, fmt.Errorf("%w: sentry provider needs an address (the project's DSN)", notifier.ErrInvalidConfig)
	}
	if _, err := sentry.NewDsn(o.Address); err != nil {
		// The error quotes the DSN, whose public key is a credential.
		return nil, fmt.Errorf("%w: sentry provider address is not a DSN (https://<key>@<host>/<project>)", notifier.ErrInvalidConfig)
	}
	return &sentryNotifier{opts: o}, nil
}

func (s *sentryNotifier) Post(ctx context.Context, e events.Event) error {
	var ev *sentry.Event
	switch e.Severity {
	case events.SeverityError:
		ev = sentryError(e)
	case events.SeverityInfo:
		ev = sentryTransaction(e)
	default:
		return nil
	}
	c := s.opts.HTTPClient
	if c == nil {
		c = http.DefaultClient
	}
	rec := &recorder{ctx: ctx, base: c.Transport}
	if rec.base == nil {
		rec.base = http.DefaultTransport
	}
	hc := *c
	hc.Transport = rec
	client, err := sentry.NewClient(sentry.ClientOptions{
		Dsn: s.opts.Address, Environment: s.opts.Channel, TracesSampleRate: 1,
		Transport: sentry.NewHTTPSyncTransport(), HTTPClient: &hc,
		// One event, then the client is dropped: nothing to batch or report.
		DisableClientReports: true, DisableMetrics: true,
	})
	if err != nil {
		return fmt.Errorf("%w: sentry provider address is not a DSN", notifier.ErrInvalidConfig)
	}
	if id := client.CaptureEvent(ev, nil, nil); id == nil {
		return errors.New("the Sentry SDK dropped the event")
	}
	return notifier.Scrub(rec.result(notifier.Host(s.opts.Address)), s.dsnSecrets())
}

// dsnSecrets is the DSN's key, which a refusing Sentry may quote.
func (s *sentryNotifier) dsnSecrets() []string {
	out := s.opts.Secrets()
	if u, err := url.Parse(s.opts.Address); err == nil && u.User != nil && u.User.Username() != "" {
		out = append(out, u.User.Username())
	}
	return out
}

// summary names the object as Flux's Sentry notifier does:
// "<Kind>: <namespace>/<name>".
func summary(e events.Event) string {
	o := e.InvolvedObject
	return o.Kind + ": " + o.Namespace + "/" + o.Name
}

// sentryError is an error event: the message, the reporting controller
// as the server, the metadata as the "metadata" context. Flux sends the
// metadata as extra data, which the SDK has dropped (v0.46) for
// contexts; Sentry shows both beside the event.
func sentryError(e events.Event) *sentry.Event {
	ev := &sentry.Event{
		Timestamp: e.Timestamp, Level: sentry.LevelError, ServerName: e.ReportingController,
		Transaction: summary(e), Message: e.Message,
	}
	if len(e.Metadata) > 0 {
		md := make(sentry.Context, len(e.Metadata))
		for k, v := range e.Metadata {
			md[k] = v
		}
		ev.Contexts = map[string]sentry.Context{"metadata": md}
	}
	return ev
}

// sentryTransaction is a transaction of one span, "event", starting and
// ending at the event's time, tagged with the object, the reporter, the
// reason and the metadata (Flux's tag names).
func sentryTransaction(e events.Event) *sentry.Event {
	o := e.InvolvedObject
	tags := map[string]string{
		"flux_involved_object_kind":      o.Kind,
		"flux_involved_object_namespace": o.Namespace,
		"flux_involved_object_name":      o.Name,
		"flux_reporting_controller":      e.ReportingController,
		"flux_reporting_instance":        e.ReportingInstance,
		"flux_reason":                    e.Reason,
	}
	for k, v := range e.Metadata {
		tags[k] = v
	}
	var traceID sentry.TraceID
	var spanID sentry.SpanID
	_, _ = rand.Read(traceID[:])
	_, _ = rand.Read(spanID[:])
	span := &sentry.Span{TraceID: traceID, SpanID: spanID, Op: "event", Tags: tags,
		StartTime: e.Timestamp, EndTime: e.Timestamp}
	return &sentry.Event{
		Type: "transaction", Transaction: summary(e), Message: e.Message,
		Contexts:  map[string]sentry.Context{"trace": sentry.TraceContext{TraceID: traceID, SpanID: spanID, Op: "event"}.Map()},
		Tags:      tags,
		Timestamp: e.Timestamp, StartTime: e.Timestamp,
		Spans: []*sentry.Span{span},
	}
}

// recorder is the SDK's transport: it carries Post's context and keeps
// what Sentry answered, which the SDK only logs.
type recorder struct {
	ctx  context.Context
	base http.RoundTripper

	mu     sync.Mutex
	sent   bool
	status string
	body   string
	err    error
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	// The SDK sends without a context: Post's ends the request too, and
	// the client's own deadline stays.
	ctx, cancel := context.WithCancel(req.Context())
	context.AfterFunc(r.ctx, cancel)
	resp, err := r.base.RoundTrip(req.WithContext(ctx))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent, r.err = true, err
	if err == nil && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		resp.Body.Close()
		r.status, r.body = resp.Status, strings.TrimSpace(string(b))
		resp.Body = io.NopCloser(strings.NewReader(string(b)))
	}
	return resp, err
}

// result is what the one request the SDK made got, as an error unless
// Sentry took the event.
func (r *recorder) result(host string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !r.sent:
		return errors.New("the Sentry SDK sent nothing")
	case r.err != nil:
		var uerr *url.Error
		err := r.err
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("posting to %s: %w", host, err)
	case r.status != "":
		return fmt.Errorf("posting to %s: %s: %s", host, r.status, r.body)
	}
	return nil
}
