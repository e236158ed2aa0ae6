package kinds

import (
	"errors"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/view/objectstate"
)

// Conditions decodes status.conditions; malformed entries are skipped.
func Conditions(u *unstructured.Unstructured) []metav1.Condition { return objectstate.Conditions(u) }

// Condition returns the condition of type t, or nil.
func Condition(u *unstructured.Unstructured, t string) *metav1.Condition {
	for _, c := range Conditions(u) {
		if c.Type == t {
			return &c
		}
	}
	return nil
}

// NotReconciledMessage is what the READY column's message says of an object
// no controller has written a Ready condition for yet (the flux CLI's words).
const NotReconciledMessage = "waiting to be reconciled"

// ReadyStatus returns the READY and MESSAGE columns: the Ready condition's
// status and message, or False and NotReconciledMessage without one.
func ReadyStatus(u *unstructured.Unstructured) (string, string) {
	if c := Condition(u, meta.ReadyCondition); c != nil {
		return string(c.Status), c.Message
	}
	return string(metav1.ConditionFalse), NotReconciledMessage
}

// ReadyStatus returns the READY and MESSAGE columns for u: the Ready
// condition's (see ReadyStatus), or True and the fixed message of a kind
// that has no status.
func (k Kind) ReadyStatus(u *unstructured.Unstructured) (string, string) {
	if k.readyMessage != "" {
		return string(metav1.ConditionTrue), k.readyMessage
	}
	return ReadyStatus(u)
}

// StatusMatches is --status-selector: whether u has a condition of type
// condType (any case) whose status is condStatus (any case). An object
// without the condition does not match.
func StatusMatches(u *unstructured.Unstructured, condType, condStatus string) bool {
	var found *metav1.Condition
	for _, c := range Conditions(u) {
		if strings.EqualFold(c.Type, condType) {
			found = &c
		}
	}
	return found != nil && strings.EqualFold(string(found.Status), condStatus)
}

// LastHandledReconcileAt is status.lastHandledReconcileAt: the last
// reconcile.fluxcd.io/requestedAt value the controller acted on.
func LastHandledReconcileAt(u *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(u.Object, "status", "lastHandledReconcileAt")
	return s
}

// ObservedGeneration is status.observedGeneration, or 0. An
// ArtifactGenerator's status has no such field: source-watcher records the
// generation in its conditions, so the Ready condition's is used.
func ObservedGeneration(u *unstructured.Unstructured) int64 {
	if u.GetKind() == ArtifactGenerator.Kind {
		if c := Condition(u, meta.ReadyCondition); c != nil {
			return c.ObservedGeneration
		}
		return 0
	}
	g, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	return g
}

// IsReady is the flux CLI's readiness rule (fluxcd/flux2/cmd/flux/readiness.go)
// with one difference: an object with a reconciler is ready once its Ready
// condition speaks of the current generation (by the condition's
// observedGeneration, or the status' when the condition carries none, as
// HelmRelease may) and kstatus computes Current. kstatus Failed is an error
// carrying its message; anything else is "not yet". A static object
// (static true) is judged by kstatus alone.
//
// The difference: the flux CLI also waits for status.observedGeneration to
// be set, which Kustomization and HelmRelease move only on success, so
// `resume --wait` and `create --wait` on an object that fails at once and
// never succeeded waited out --timeout. The Ready condition's
// observedGeneration already says the failure is of the current spec (the
// same reading as reconcilecmd.Outcome).
func IsReady(u *unstructured.Unstructured, static bool) (bool, error) {
	if !static {
		c := Condition(u, meta.ReadyCondition)
		if c == nil {
			return false, nil
		}
		if c.ObservedGeneration != 0 && c.ObservedGeneration != u.GetGeneration() {
			return false, nil
		}
		if observed := ObservedGeneration(u); c.ObservedGeneration == 0 && (observed < 1 || observed != u.GetGeneration()) {
			return false, nil
		}
	}
	res, err := Compute(u)
	if err != nil {
		return false, err
	}
	switch res.Status {
	case status.CurrentStatus:
		return true, nil
	case status.InProgressStatus:
		return false, nil
	default:
		return false, errors.New(res.Message)
	}
}

// Compute is kstatus as Flux reads it. Upstream kstatus calls a resource
// whose Ready condition is False "InProgress"; Flux's fork of cli-utils (and
// so the flux CLI and Flux's health checks, which report a failing
// Kustomization as "status: 'Failed'") treats a Ready=False at the observed
// generation as Failed, unless a Reconciling condition says work is under
// way (a retry after failure, ProgressingWithRetry, does not count).
// Without that, `resume --wait` would wait out its timeout on every
// failure. (`reconcile` reads the request's outcome itself:
// reconcilecmd.Outcome.)
func Compute(u *unstructured.Unstructured) (*status.Result, error) {
	res, err := status.Compute(u)
	if err != nil || res.Status != status.InProgressStatus {
		return res, err
	}
	// A controller that failed and will retry keeps Reconciling=True with
	// reason ProgressingWithRetry: its attempt is over, and failed.
	if c := Condition(u, meta.ReconcilingCondition); c != nil && c.Status == metav1.ConditionTrue &&
		c.Reason != meta.ProgressingWithRetryReason {
		return res, nil
	}
	ready := Condition(u, meta.ReadyCondition)
	if ready == nil || ready.Status != metav1.ConditionFalse {
		return res, nil
	}
	// The generation the failure is of: the condition's, else the status'
	// (kstatus reads only the status', which Kustomization and HelmRelease
	// leave behind on a failure they will retry).
	if ready.ObservedGeneration != 0 {
		if ready.ObservedGeneration != u.GetGeneration() {
			return res, nil
		}
	} else if g, ok, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); ok && g != u.GetGeneration() {
		return res, nil
	}
	return &status.Result{Status: status.FailedStatus, Message: ready.Message}, nil
}
