package reconcilecmd

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// Outcome reads what u says of the reconcile request token, for one poll:
// done is false while the request is not handled or its run goes on; done
// with a nil error is success (Ready=True); done with an error is a
// failure the controller has reported for this request, which ends the
// wait at once.
//
// The request is handled once status.lastHandledReconcileAt shows the
// token (Handled) and the Ready condition speaks of the object's current
// generation. The generation is read from the condition, not from
// status.observedGeneration: Flux's kustomize- and helm-controller (and
// weir's) move that field only on success or on a stall, so after a
// failure they will retry it stays behind (-1 on an object that never
// succeeded) although Ready describes the current spec. Waiting for it
// made every such failure wait out --timeout (issue 33). A condition
// without observedGeneration falls back to the status' field.
//
// Once handled, the verdict is:
//   - Stalled=True: failed, the spec cannot work as it is;
//   - Reconciling=True, other than ProgressingWithRetry: the run goes on,
//     wait (ProgressingWithRetry marks a failed attempt that the
//     controller will retry on its own schedule: the attempt is over);
//   - Ready=Unknown: in progress, wait;
//   - Ready=True: success;
//   - Ready=False, whatever the reason: failed, with Ready's reason and
//     message. This includes the reasons that mean the controller waits
//     for something else (DependencyNotReady, ArtifactFailed with "Source
//     artifact not found, retrying"): the handled request's answer is
//     "not applied, because…", as `flux reconcile` reports it, and the
//     retry the controller schedules is not an answer to this request.
func Outcome(u *unstructured.Unstructured, token string) (done bool, err error) {
	if !Handled(kinds.LastHandledReconcileAt(u), token) {
		return false, nil
	}
	ready := kinds.Condition(u, meta.ReadyCondition)
	if ready != nil && !ofGeneration(u, ready) {
		return false, nil
	}
	if stalled := kinds.Condition(u, meta.StalledCondition); isTrue(stalled) && ofGeneration(u, stalled) {
		if ready == nil || ready.Status != metav1.ConditionFalse {
			ready = stalled
		}
		return true, failed(u, ready)
	}
	if r := kinds.Condition(u, meta.ReconcilingCondition); isTrue(r) && r.Reason != meta.ProgressingWithRetryReason {
		return false, nil
	}
	if ready == nil {
		return true, fmt.Errorf("status can't be determined: %s %s in %s namespace has no Ready condition",
			u.GetKind(), u.GetName(), u.GetNamespace())
	}
	switch ready.Status {
	case metav1.ConditionTrue:
		return true, nil
	case metav1.ConditionFalse:
		return true, failed(u, ready)
	default:
		return false, nil
	}
}

// Failure is a reconcile the controller handled and reported as failed:
// the condition's reason and message, as `weir reconcile` prints them.
type Failure struct {
	Kind, Reason, Message string
}

func (f *Failure) Error() string {
	return fmt.Sprintf("%s reconciliation failed: %s: '%s'", f.Kind, f.Reason, f.Message)
}

func failed(u *unstructured.Unstructured, c *metav1.Condition) error {
	return &Failure{Kind: u.GetKind(), Reason: c.Reason, Message: c.Message}
}

func isTrue(c *metav1.Condition) bool { return c != nil && c.Status == metav1.ConditionTrue }

// ofGeneration reports whether c was written for u's current generation:
// by the condition's observedGeneration, or the status' when the
// condition carries none (a kind without either is taken as current).
func ofGeneration(u *unstructured.Unstructured, c *metav1.Condition) bool {
	if c.ObservedGeneration != 0 {
		return c.ObservedGeneration == u.GetGeneration()
	}
	g, ok, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	return !ok || g == u.GetGeneration()
}
