package eventserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/weir-gitops/weir/internal/runtime/httpserve"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/commitstatus"
	"github.com/weir-gitops/weir/internal/notification/notifier/gitcomment"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// maxEventBytes bounds an event body: Flux caps messages at 39,000
// characters, and metadata is small.
const maxEventBytes = 256 << 10

// DefaultRateLimitInterval is Flux's --rate-limit-interval default.
const DefaultRateLimitInterval = 5 * time.Minute

// Options configures a Server.
type Options struct {
	// NoCrossNamespaceRefs refuses eventSources entries naming another
	// namespace than the Alert's (--no-cross-namespace-refs).
	NoCrossNamespaceRefs bool
	// RateLimitInterval is how long the same event (object, severity,
	// reason, message, metadata) is held back after being forwarded
	// (--rate-limit-interval). Zero forwards every event.
	RateLimitInterval time.Duration
	// SecretReader reads Provider Secrets (the app gives a
	// secretcache.Cache: one API read per Secret version); the client
	// when nil.
	SecretReader client.Reader
	// HTTPClient, when set, delivers every event instead of a client
	// built from the Provider's timeout, CA and proxy. For tests.
	HTTPClient *http.Client
	// Retry is how failed deliveries are retried; Flux's policy when nil.
	// For tests.
	Retry *notifier.Retry
	// Events, when set, records a Warning Event on the Alert whose
	// delivery failed, as Flux's notification-controller does.
	Events EventRecorder
	// Auth decides and exchanges the cloud identity of the Providers
	// whose types accept workload identity (azureeventhub, azuredevops,
	// googlepubsub) and whose Secret holds no credential: the
	// ObjectLevelWorkloadIdentity gate, --default-service-account, the
	// TokenRequest client and the token cache. Nil is the controller's
	// own identity, and a Provider naming a ServiceAccount is refused.
	Auth *auth.Settings
}

// EventRecorder records Kubernetes Events (events.Recorder does).
type EventRecorder interface {
	Warning(ctx context.Context, obj client.Object, reason string, metadata map[string]string, messageFormat string, args ...any)
}

// Server receives controllers' events (POST /, JSON events.Event) and
// forwards each to the Providers of the Alerts that match it. It is a
// manager.Runnable running on every replica: any replica behind the
// Service may receive an event.
type Server struct {
	addr    string
	client  client.Client
	log     logr.Logger
	opts    Options
	limiter *limiter

	// inflight counts deliveries still running, so that shutdown (and
	// tests) can wait for them.
	inflight sync.WaitGroup
	// baseCtx parents deliveries: they outlive the request that
	// triggered them but not the server.
	baseCtx context.Context
	cancel  context.CancelFunc
}

// NewServer returns a Server listening on addr, reading Alerts, Providers
// and involved objects with c.
func NewServer(addr string, c client.Client, log logr.Logger, opts Options) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		addr: addr, client: c, log: log, opts: opts,
		limiter: newLimiter(opts.RateLimitInterval, nil),
		baseCtx: ctx, cancel: cancel,
	}
}

// NeedLeaderElection is false: every replica receives events.
func (s *Server) NeedLeaderElection() bool { return false }

// Start listens on the address until ctx ends, then stops accepting
// events and gives deliveries in flight a few seconds to finish.
func (s *Server) Start(ctx context.Context) error {
	err := httpserve.Serve(ctx, "event server", s.addr, s.Handler(), s.log, httpserve.Defaults)
	grace, cancel := context.WithTimeout(context.Background(), httpserve.ShutdownGrace)
	defer cancel()
	s.waitDeliveries(grace)
	// Deliveries still running past the grace period are abandoned.
	s.cancel()
	return err
}

// waitDeliveries waits for deliveries in flight, at most until ctx ends.
func (s *Server) waitDeliveries(ctx context.Context) {
	done := make(chan struct{})
	go func() { s.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Handler returns the server's routes, for tests and for embedding.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{$}", s.handle)
	return mux
}

// handle answers as Flux's event server does: 400 for a malformed event,
// 429 for a duplicate within the rate-limit interval, 202 once accepted.
// Deliveries run after the answer, so a slow provider never holds up the
// controller that reported the event.
func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	var e events.Event
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEventBytes))
	if err == nil {
		err = json.Unmarshal(body, &e)
	}
	if err == nil {
		err = validateEvent(&e)
	}
	if err != nil {
		s.log.Error(err, "event refused")
		http.Error(w, "invalid event: "+err.Error(), http.StatusBadRequest)
		return
	}
	log := s.log.WithValues("involvedObject", e.InvolvedObject.Kind+"/"+e.InvolvedObject.Namespace+"/"+e.InvolvedObject.Name,
		"severity", e.Severity, "reason", e.Reason)
	md := splitMetadata(&e)
	e.Metadata = nil
	if e.Severity == events.SeverityTrace {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	key := rateLimitKey(&e, md)
	if !s.limiter.allow(key) {
		log.V(1).Info("event rate limited")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	deliveries, err := s.plan(r.Context(), log, e, md.withoutInternal())
	if err != nil {
		// Not forwarded: a retry of the same event must not be held back.
		s.limiter.forget(key)
		log.Error(err, "cannot match event to alerts")
		http.Error(w, "cannot list alerts", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	for _, d := range deliveries {
		s.inflight.Add(1)
		go func() {
			defer s.inflight.Done()
			s.deliver(d)
		}()
	}
}

// delivery is one event bound for one Provider, as one Alert wants it.
type delivery struct {
	log      logr.Logger
	alert    *notificationv1beta3.Alert
	event    events.Event
	provider *notificationv1beta3.Provider
	// commitStatus is the status key, for the commit-status types.
	commitStatus string
}

// plan finds the Alerts selecting e and resolves their Providers. Alerts
// are listed in every namespace: an Alert may select objects of another
// namespace through eventSources. md is e's metadata, sorted by source.
func (s *Server) plan(ctx context.Context, log logr.Logger, e events.Event, md eventMetadata) ([]delivery, error) {
	var alerts notificationv1beta3.AlertList
	// The cache's own objects, not copies (50 Alerts an event at 1,000
	// events a second, bench/events): nothing here writes to them, and
	// commitStatusKey copies what it hands on.
	if err := s.client.List(ctx, &alerts, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing alerts: %w", err)
	}
	readLabels := s.labelReader(ctx, e)
	var out []delivery
	for i := range alerts.Items {
		a := &alerts.Items[i]
		alog := log.WithValues("alert", a.Namespace+"/"+a.Name)
		sel, errs := selects(a, &e, s.opts.NoCrossNamespaceRefs, readLabels)
		for _, err := range errs {
			alog.Error(err, "alert misconfigured")
		}
		if !sel.selected {
			alog.V(1).Info("alert skips event", "why", sel.reason)
			continue
		}
		p, err := s.provider(ctx, a, md)
		if err != nil {
			alog.Error(err, "cannot forward event")
			s.recordFailure(a, "dispatch", e, err)
			continue
		}
		if p == nil {
			continue
		}
		kind := p.Spec.Type
		forwarded := e
		var conflicts map[string]string
		forwarded.Metadata, conflicts = md.merged(a.Spec.Summary, a.Spec.EventMetadata)
		if len(conflicts) > 0 {
			s.recordConflicts(alog, a, conflicts)
		}
		var statusKey string
		if notificationv1beta3.IsCommitStatusProvider(kind) {
			if !commitstatus.Wants(forwarded) {
				alog.V(1).Info("event sets no commit status", "provider", p.Name)
				continue
			}
			if statusKey, err = commitStatusKey(p, a, forwarded); err != nil {
				alog.Error(err, "cannot forward event", "provider", p.Name)
				s.recordFailure(a, "dispatch", e, err)
				continue
			}
		}
		if slices.Contains(gitcomment.Types, kind) {
			// As Flux: the change request is the event's, not an Alert's.
			own := e
			own.Metadata, _ = md.merged("", nil)
			if why, loud := gitcomment.Skip(kind, own); why != "" {
				l := alog.V(1)
				if loud {
					l = alog
				}
				l.Info("event dropped for the provider", "provider", p.Name, "why", why)
				continue
			}
		}
		out = append(out, delivery{
			log:          alog.WithValues("provider", a.Spec.ProviderRef.Name, "type", kind),
			alert:        a,
			event:        forwarded,
			provider:     p,
			commitStatus: statusKey,
		})
	}
	return out, nil
}

// provider returns the Alert's Provider, or nil when it is suspended or
// the event is not for its type: as in Flux, the event that sets commit
// statuses (commit_status: update) goes to the commit-status types only,
// dropped for every other type. A type weir does not deliver to is an
// error: the Alert would otherwise do nothing without a word. The
// Provider's Secrets are read by the delivery, after the controller's
// request is answered (deliver).
func (s *Server) provider(ctx context.Context, a *notificationv1beta3.Alert, md eventMetadata) (*notificationv1beta3.Provider, error) {
	var p notificationv1beta3.Provider
	key := client.ObjectKey{Namespace: a.Namespace, Name: a.Spec.ProviderRef.Name}
	if err := s.client.Get(ctx, key, &p, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("reading provider %s: %w", key, err)
	}
	if p.Spec.Suspend {
		return nil, nil
	}
	if !notificationv1beta3.IsCommitStatusProvider(p.Spec.Type) && md.commitStatusUpdate() {
		return nil, nil
	}
	if !supportedType(p.Spec.Type) {
		return nil, fmt.Errorf("provider %s: %w: %q", key, errUnsupportedType, p.Spec.Type)
	}
	return &p, nil
}

// commitStatusKey is the key of the status e sets: the Provider's
// commitStatusExpr evaluated, or Flux's default.
func commitStatusKey(p *notificationv1beta3.Provider, a *notificationv1beta3.Alert, e events.Event) (string, error) {
	if p.Spec.CommitStatusExpr == "" {
		return commitstatus.DefaultKey(e.InvolvedObject.Kind, e.InvolvedObject.Name, string(p.UID)), nil
	}
	pc, ac := p.DeepCopy(), a.DeepCopy()
	pc.APIVersion, pc.Kind = notificationv1beta3.GroupVersion.String(), notificationv1beta3.ProviderKind
	ac.APIVersion, ac.Kind = notificationv1beta3.GroupVersion.String(), notificationv1beta3.AlertKind
	k, err := commitstatus.Key(p.Spec.CommitStatusExpr, e, pc, ac)
	if err != nil {
		return "", fmt.Errorf("provider %s/%s: %w", p.Namespace, p.Name, err)
	}
	return k, nil
}

// labelReader reads the involved object once, on first need, as
// unstructured: the server need not know the kinds it is told about.
func (s *Server) labelReader(ctx context.Context, e events.Event) labelReader {
	var (
		once   sync.Once
		labels map[string]string
		err    error
	)
	return func() (map[string]string, error) {
		once.Do(func() {
			o := e.InvolvedObject
			gv, perr := schema.ParseGroupVersion(o.APIVersion)
			if perr != nil || o.APIVersion == "" {
				err = errors.New("event has no valid involvedObject.apiVersion")
				return
			}
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gv.WithKind(o.Kind))
			if err = s.client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, u); err == nil {
				labels = u.GetLabels()
			}
		})
		return labels, err
	}
}

// deliver resolves the Provider against its Secrets, sends one event to
// it and logs the outcome. The Secrets are read here, after the
// controller's request was answered: a read held up by the client's rate
// limit (--kube-api-qps) delays the delivery, never the controller.
func (s *Server) deliver(d delivery) {
	// The client's timeout covers built clients; the context covers
	// Options.HTTPClient and the Secrets' reads.
	ctx, cancel := context.WithTimeout(s.baseCtx, d.provider.GetTimeout())
	defer cancel()
	t, err := resolveTarget(ctx, s.secretReader(), d.provider)
	if err != nil {
		d.log.Error(err, "cannot forward event")
		s.recordFailure(d.alert, "dispatch", d.event, err)
		return
	}
	t.alert = notifier.AlertRef{Namespace: d.alert.Namespace, Name: d.alert.Name, UID: string(d.alert.UID)}
	t.reader, t.commitStatus = s.client, d.commitStatus
	proxy, err := t.proxyURL()
	if err != nil {
		d.log.Error(err, "cannot forward event")
		s.recordFailure(d.alert, "send", d.event, err)
		return
	}
	// The exchanges of workload identity take the Provider's proxy, as
	// its delivery does (0045).
	t.identity = t.cloudIdentity(s.opts.Auth.WithProxy(proxy))
	c := s.opts.HTTPClient
	if c == nil {
		if c, err = newHTTPClient(t); err != nil {
			d.log.Error(err, "cannot forward event")
			s.recordFailure(d.alert, "send", d.event, err)
			return
		}
	}
	if retried(t.kind) {
		policy := notifier.FluxRetry
		if s.opts.Retry != nil {
			policy = *s.opts.Retry
		}
		c = notifier.Retrying(c, policy)
	}
	n, err := newNotifier(t, c)
	if err == nil {
		err = n.Post(ctx, d.event)
	}
	if err != nil {
		err = scrubbed(err, t)
		d.log.Error(err, "cannot forward event")
		s.recordFailure(d.alert, "send", d.event, err)
		return
	}
	d.log.V(1).Info("event forwarded", "address", redactAddress(t.address))
}

// recordFailure puts a Warning Event on the Alert, with Flux's reason and
// message ("failed to send notification for <Kind>/<namespace>/<name>:
// …"), verb saying whether sending or preparing the delivery failed. err
// is already free of credentials.
func (s *Server) recordFailure(a *notificationv1beta3.Alert, verb string, e events.Event, err error) {
	if s.opts.Events == nil || a == nil {
		return
	}
	o := e.InvolvedObject
	s.opts.Events.Warning(s.baseCtx, a, notificationv1.NotificationDispatchFailedReason, nil,
		"failed to %s notification for %s/%s/%s: %s", verb, o.Kind, o.Namespace, o.Name, err)
}

// recordConflicts logs the metadata keys several sources set and, as
// Flux does, puts a MetadataAppendFailed Warning Event on the Alert, in
// Flux's words: the keys with the sources that set them, lowest first.
func (s *Server) recordConflicts(log logr.Logger, a *notificationv1beta3.Alert, conflicts map[string]string) {
	log.Info("metadata key conflicts: annotations < eventMetadata < summary < the controller's keys", "keys", conflicts)
	if s.opts.Events == nil {
		return
	}
	s.opts.Events.Warning(s.baseCtx, a, notificationv1.MetadataAppendFailedReason, nil,
		"metadata key conflicts detected (please refer to the Alert API docs and Flux RFC 0008 for more "+
			"information) %v", conflicts)
}

func (s *Server) secretReader() client.Reader {
	if s.opts.SecretReader != nil {
		return s.opts.SecretReader
	}
	return s.client
}
