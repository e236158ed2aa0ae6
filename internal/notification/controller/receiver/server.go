package receiver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/weir-gitops/weir/internal/runtime/httpserve"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// DefaultMaxBodyBytes bounds a request body: webhook payloads are small,
// and the body is held in memory to check its signature.
const DefaultMaxBodyBytes = 1 << 20

// Server serves the Receivers' webhooks: POST /hook/<digest>. It is a
// manager.Runnable that runs on every replica, not only the leader, so any
// replica behind the Service answers.
type Server struct {
	addr    string
	client  client.Client
	log     logr.Logger
	noCross bool

	// SecretReader reads token Secrets; the client when nil. Pass the
	// manager's API reader to keep Secrets out of the cache.
	SecretReader client.Reader
	// Events, when set, records an event on the Receiver for every
	// request acted upon.
	Events *events.Recorder
	// MaxBodyBytes bounds request bodies; DefaultMaxBodyBytes when zero.
	MaxBodyBytes int64
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	// tokens verifies the OIDC tokens of gcr and generic-oidc requests,
	// keeping each issuer's keys between requests.
	tokens *tokenVerifier
}

// NewServer returns a Server listening on addr. c must read Receivers from
// a cache holding the WebhookPathIndex that Reconciler.SetupWithManager
// registers. With noCrossNamespaceRefs, resources outside the Receiver's
// namespace are refused.
func NewServer(addr string, c client.Client, log logr.Logger, noCrossNamespaceRefs bool) *Server {
	return &Server{addr: addr, client: c, log: log, noCross: noCrossNamespaceRefs, tokens: newTokenVerifier()}
}

// NeedLeaderElection is false: every replica serves hooks.
func (s *Server) NeedLeaderElection() bool { return false }

// Start listens on the address until ctx ends, then shuts down, letting
// requests in flight finish for a few seconds.
func (s *Server) Start(ctx context.Context) error {
	return httpserve.Serve(ctx, "receiver server", s.addr, s.Handler(), s.log, httpserve.Options{WriteTimeout: 60 * time.Second})
}

// Handler returns the server's routes, for tests and for embedding.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+notificationv1.WebhookPathPrefix+"{digest}", s.handle)
	return mux
}

// reply is the outcome of one request: the status code, a message for the
// caller, and the Receiver when one was found.
type reply struct {
	code     int
	message  string
	receiver *notificationv1.Receiver
	err      error
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rep := s.serve(r.Context(), w, r)
	kv := []any{"path", r.URL.Path, "code", rep.code, "duration", time.Since(start).String()}
	if o := rep.receiver; o != nil {
		kv = append(kv, "receiver", o.Namespace+"/"+o.Name, "type", o.Spec.Type)
	}
	if rep.err != nil {
		s.log.Error(rep.err, "webhook request refused", kv...)
	} else {
		s.log.Info("webhook request handled", kv...)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(rep.code)
	_, _ = io.WriteString(w, rep.message+"\n")
}

// serve finds the Receiver, validates the request and annotates the
// resources. Every message it returns is safe to show the caller: no
// token, no signature, no body.
func (s *Server) serve(ctx context.Context, w http.ResponseWriter, r *http.Request) reply {
	obj, rep := s.find(ctx, r.URL.Path)
	if obj == nil {
		return rep
	}
	rep.receiver = obj
	if obj.Spec.Suspend {
		return rep.with(http.StatusServiceUnavailable, "receiver is suspended", errors.New("receiver is suspended"))
	}
	if !conditions.IsReady(obj) {
		return rep.with(http.StatusServiceUnavailable, "receiver is not ready", errors.New("receiver is not ready"))
	}
	body, err := s.readBody(w, r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return rep.with(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", tooBig.Limit), err)
		}
		return rep.with(http.StatusBadRequest, "unable to read request body", err)
	}
	token, secret, err := readSecret(ctx, s.secretReader(), obj)
	if err != nil {
		return rep.with(http.StatusServiceUnavailable, "receiver token unavailable", err)
	}
	if obj.GetWebhookPath(token) != r.URL.Path {
		// The token changed since the path was published: the old path
		// must stop working at once, before the next reconcile.
		return rep.with(http.StatusNotFound, "not found", errors.New("webhook path does not match the current token"))
	}
	v, err := validate(ctx, check{req: request{header: r.Header, body: body}, token: token, secret: secret, spec: &obj.Spec, tokens: s.tokens})
	if err != nil {
		return rep.with(validationCode(err), err.Error(), err)
	}
	if v.ping {
		return rep.with(http.StatusOK, "pong", nil)
	}
	if v.body != nil {
		body = v.body
	}
	return s.notifyAll(ctx, obj, body, v.claims, rep)
}

// find returns the Receiver published under path.
func (s *Server) find(ctx context.Context, path string) (*notificationv1.Receiver, reply) {
	var list notificationv1.ReceiverList
	if err := s.client.List(ctx, &list, client.MatchingFields{WebhookPathIndex: path}); err != nil {
		return nil, reply{code: http.StatusInternalServerError, message: "unable to look up receivers", err: err}
	}
	if len(list.Items) == 0 {
		return nil, reply{code: http.StatusNotFound, message: "not found"}
	}
	return &list.Items[0], reply{}
}

// notifyAll annotates the objects of every spec.resources entry and lists
// the entries that failed.
func (s *Server) notifyAll(ctx context.Context, obj *notificationv1.Receiver, body []byte, claims map[string]any, rep reply) reply {
	a := &annotator{client: s.client, now: s.now(), noCross: s.noCross, body: requestBody(body), claims: claims}
	var failures []string
	annotated := 0
	for i, res := range obj.Spec.Resources {
		n, err := a.notify(ctx, obj, res)
		annotated += n
		if err != nil {
			failures = append(failures, fmt.Sprintf("resources[%d]: %s", i, err))
		}
	}
	if len(failures) > 0 {
		err := errors.New(strings.Join(failures, "; "))
		return rep.with(http.StatusInternalServerError, "unable to request reconciliation: "+err.Error(), err)
	}
	if s.Events != nil {
		s.Events.Normal(ctx, obj, handledEventReason, nil, "handled webhook request, %d object(s) annotated", annotated)
	}
	return rep.with(http.StatusOK, fmt.Sprintf("%d object(s) annotated", annotated), nil)
}

func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	limit := s.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
}

func (s *Server) secretReader() client.Reader {
	if s.SecretReader != nil {
		return s.SecretReader
	}
	return s.client
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (rep reply) with(code int, message string, err error) reply {
	rep.code, rep.message, rep.err = code, message, err
	return rep
}

// validationCode maps a validation error to its status code. Flux answers
// 400 to every validation failure; weir says 401 when the request does not
// authenticate, so a misconfigured secret stands out in the sender's log,
// and 503 when the OIDC issuer cannot be reached, which a sender retries.
// A verified token failing the validations is 400, as in Flux.
func validationCode(err error) int {
	switch {
	case errors.Is(err, errUnauthenticated):
		return http.StatusUnauthorized
	case errors.Is(err, errIssuerUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, errUnsupportedType):
		return http.StatusNotImplemented
	default:
		return http.StatusBadRequest
	}
}
