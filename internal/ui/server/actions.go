package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/ui/fleetview"
	"github.com/weir-gitops/weir/internal/ui/objectview"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// Actions, as POST /api/actions names them.
const (
	ActionReconcile       = "reconcile"
	ActionReconcileSource = "reconcile-source"
	ActionSuspend         = "suspend"
	ActionResume          = "resume"
)

// Event reasons of the actions.
const (
	ReasonReconcileRequested = "ReconcileRequested"
	ReasonSuspended          = "Suspended"
	ReasonResumed            = "Resumed"
)

type actionRequest struct {
	Action  string          `json:"action"`
	Reason  string          `json:"reason"`
	Targets []fleetview.Ref `json:"targets"`
}

type actionResult struct {
	Ref   fleetview.Ref `json:"ref"`
	OK    bool          `json:"ok"`
	Error string        `json:"error,omitempty"`
}

type actionResponse struct {
	Results []actionResult `json:"results"`
	// Error is set when no target succeeded: the first target's error.
	Error string `json:"error,omitempty"`
}

// forbiddenError is a refusal by SelfSubjectAccessReview.
type forbiddenError struct{ reason string }

func (e *forbiddenError) Error() string { return e.reason }

// actions runs one action on each target, in order. The answer is 200 when
// any target succeeded, 403 when every target was refused by RBAC, and 422
// when all failed otherwise; each target has its own result.
func (s *Server) actions(w http.ResponseWriter, r *http.Request, sess *session) {
	var req actionRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "reading the action: "+err.Error())
		return
	}
	switch req.Action {
	case ActionReconcile, ActionReconcileSource, ActionSuspend, ActionResume:
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown action %q (reconcile, reconcile-source, suspend, resume)", req.Action))
		return
	}
	if len(req.Targets) == 0 {
		writeError(w, http.StatusBadRequest, "no targets")
		return
	}
	resp := actionResponse{Results: make([]actionResult, 0, len(req.Targets))}
	anyOK, allForbidden := false, true
	for _, t := range req.Targets {
		err := s.act(r.Context(), sess, req, t)
		res := actionResult{Ref: t, OK: err == nil}
		if err != nil {
			res.Error = err.Error()
			if resp.Error == "" {
				resp.Error = res.Error
			}
			var denied *forbiddenError
			allForbidden = allForbidden && (errors.As(err, &denied) || apierrors.IsForbidden(err))
		} else {
			anyOK = true
		}
		resp.Results = append(resp.Results, res)
	}
	code := http.StatusOK
	switch {
	case anyOK:
		resp.Error = ""
	case allForbidden:
		code = http.StatusForbidden
	default:
		code = http.StatusUnprocessableEntity
	}
	writeJSON(w, code, resp)
}

// act checks, does and records one action on one target.
func (s *Server) act(ctx context.Context, sess *session, req actionRequest, t fleetview.Ref) error {
	k, ok := kinds.ByKind(t.Kind)
	if !ok {
		return fmt.Errorf("unknown kind %q", t.Kind)
	}
	if err := s.allowed(ctx, sess, req.Action, t); err != nil {
		return err
	}
	u := k.New()
	if err := sess.client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Name}, u); err != nil {
		return fmt.Errorf("reading %s %s/%s: %w", k.Kind, t.Namespace, t.Name, err)
	}
	owner := client.FieldOwner(Component + "/" + sess.user.Name)
	var reason, message string
	switch req.Action {
	case ActionReconcile, ActionReconcileSource:
		if err := s.requestReconcile(ctx, sess, u, req.Action == ActionReconcileSource, owner); err != nil {
			return err
		}
		reason, message = ReasonReconcileRequested, "Reconciliation requested by "+sess.user.Name+" in weir-ui"
	case ActionSuspend:
		if err := setSuspend(ctx, sess.client, u, true, req.Reason, owner); err != nil {
			return err
		}
		reason, message = ReasonSuspended, "Suspended by "+sess.user.Name+" in weir-ui"
		if req.Reason != "" {
			message += ": " + req.Reason
		}
	case ActionResume:
		if err := setSuspend(ctx, sess.client, u, false, "", owner); err != nil {
			return err
		}
		reason, message = ReasonResumed, "Resumed by "+sess.user.Name+" in weir-ui"
	}
	s.record(ctx, sess, u, reason, message)
	return nil
}

// allowed asks, with SelfSubjectAccessReviews as the user, whether the
// action may be done on t (objectview's Permissions, as the object page
// shows them).
func (s *Server) allowed(ctx context.Context, sess *session, action string, t fleetview.Ref) error {
	perms, err := objectview.Permissions(ctx, sess.client, t, sess.user.Name)
	if err != nil {
		return err
	}
	p := perms.Reconcile
	switch action {
	case ActionReconcileSource:
		p = perms.ReconcileSource
	case ActionSuspend:
		p = perms.Suspend
	case ActionResume:
		p = perms.Resume
	}
	if !p.Allowed {
		return &forbiddenError{reason: p.Reason}
	}
	return nil
}

// requestReconcile sets reconcile.fluxcd.io/requestedAt on u, as `weir
// reconcile` does, after its sources when withSource is set (each checked
// as the user first).
func (s *Server) requestReconcile(ctx context.Context, sess *session, u *unstructured.Unstructured, withSource bool,
	owner client.FieldOwner) error {
	if kinds.Suspended(u) {
		return fmt.Errorf("resource is suspended: %s %s in %s namespace", u.GetKind(), u.GetName(), u.GetNamespace())
	}
	token := meta.NewReconcileRequestToken(time.Now())
	if withSource {
		srcs, err := kinds.SourcesOf(u)
		if err != nil {
			return err
		}
		for _, src := range srcs {
			su := src.Kind.New()
			if err := sess.client.Get(ctx, client.ObjectKey{Namespace: src.Namespace, Name: src.Name}, su); err != nil {
				return fmt.Errorf("reading source %s %s/%s: %w", src.Kind.Kind, src.Namespace, src.Name, err)
			}
			if err := annotate(ctx, sess.client, su, token, owner); err != nil {
				return err
			}
		}
	}
	return annotate(ctx, sess.client, u, token, owner)
}

func annotate(ctx context.Context, c client.Client, u *unstructured.Unstructured, token string, owner client.FieldOwner) error {
	patch := client.MergeFrom(u.DeepCopy())
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[meta.ReconcileRequestAnnotation] = token
	u.SetAnnotations(ann)
	if err := c.Patch(ctx, u, patch, owner); err != nil {
		return fmt.Errorf("annotating %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// setSuspend writes spec.suspend as `weir suspend` and `weir resume` do:
// suspending records the reason annotation when one is given, resuming
// removes spec.suspend and the annotation.
func setSuspend(ctx context.Context, c client.Client, u *unstructured.Unstructured, suspend bool, reason string,
	owner client.FieldOwner) error {
	patch := client.MergeFrom(u.DeepCopy())
	kinds.SetSuspended(u, suspend)
	ann := u.GetAnnotations()
	if suspend {
		if reason != "" {
			if ann == nil {
				ann = map[string]string{}
			}
			ann[meta.SuspendReasonAnnotation] = reason
		}
	} else {
		delete(ann, meta.SuspendReasonAnnotation)
	}
	u.SetAnnotations(ann)
	if err := c.Patch(ctx, u, patch, owner); err != nil {
		return fmt.Errorf("patching %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// record writes a Normal Event on u naming the user: with the user's
// credentials in Local mode, the ServiceAccount's in Cluster mode. An
// Event that cannot be written is logged; the action stands.
func (s *Server) record(ctx context.Context, sess *session, u *unstructured.Unstructured, reason, message string) {
	now := metav1.NewTime(s.opts.Now())
	host, _ := os.Hostname()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: fmt.Sprintf("%s.%x", u.GetName(), now.UnixNano())},
		InvolvedObject: corev1.ObjectReference{Kind: u.GetKind(), APIVersion: u.GetAPIVersion(), Namespace: u.GetNamespace(),
			Name: u.GetName(), UID: u.GetUID(), ResourceVersion: u.GetResourceVersion()},
		Reason: reason, Message: message, Type: corev1.EventTypeNormal, Count: 1,
		FirstTimestamp: now, LastTimestamp: now,
		Source:              corev1.EventSource{Component: Component, Host: host},
		ReportingController: Component, ReportingInstance: host,
	}
	c := s.base
	if s.opts.Mode == Local {
		c = sess.client
	}
	if err := c.Create(ctx, ev); err != nil {
		s.log.Error(err, "could not record the action as an Event", "reason", reason, "kind", u.GetKind(),
			"namespace", u.GetNamespace(), "name", u.GetName(), "user", sess.user.Name)
	}
}
