package testenv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1 "k8s.io/api/core/v1"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// Reconciled is an object with Flux's status conventions: conditions,
// status.observedGeneration and status.lastHandledReconcileAt.
type Reconciled interface {
	client.Object
	meta.ObjectWithConditions
}

// Create creates every object, failing the test on the first error.
func (e *Env) Create(t testing.TB, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := e.Client.Create(context.Background(), obj); err != nil {
			t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
	}
}

// Update refetches obj, applies change and writes it, retrying on conflicts.
func (e *Env) Update(t testing.TB, obj client.Object, change func()) {
	t.Helper()
	Eventually(t, DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		change()
		if err := e.Client.Update(ctx, obj); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// RequestReconcile sets reconcile.fluxcd.io/requestedAt as the flux CLI does.
func (e *Env) RequestReconcile(t testing.TB, obj client.Object) {
	t.Helper()
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[meta.ReconcileRequestAnnotation] = meta.NewReconcileRequestToken(time.Now())
	obj.SetAnnotations(ann)
	if err := e.Client.Patch(context.Background(), obj, patch); err != nil {
		t.Fatal(err)
	}
}

// Handled reports whether the controller has acted on obj's generation and
// on its latest reconcile request.
func Handled(obj Reconciled) bool {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return false
	}
	status, _ := u["status"].(map[string]any)
	gen, ok := status["observedGeneration"].(int64)
	if !ok {
		// Kinds without status.observedGeneration (ArtifactGenerator)
		// say which generation they handled on their Ready condition.
		if ready := conditions.Get(obj, meta.ReadyCondition); ready != nil {
			gen = ready.ObservedGeneration
		}
	}
	handled, _ := status["lastHandledReconcileAt"].(string)
	return gen == obj.GetGeneration() && handled == obj.GetAnnotations()[meta.ReconcileRequestAnnotation]
}

// WaitForReady waits until obj has handled its latest generation and
// request, is Ready, and also satisfies more (when not nil). obj holds the
// latest state afterwards.
func (e *Env) WaitForReady(t testing.TB, obj Reconciled, more func() (bool, string)) {
	t.Helper()
	Eventually(t, DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		if !Handled(obj) {
			return false, "latest generation or request not handled yet"
		}
		if !conditions.IsReady(obj) {
			return false, describeReady(obj)
		}
		if more != nil {
			return more()
		}
		return true, ""
	})
}

// WaitForFailure waits until obj has handled its latest generation and
// request with Ready=False and the given reason, and returns Ready.
func (e *Env) WaitForFailure(t testing.TB, obj Reconciled, reason string) *metav1.Condition {
	t.Helper()
	var ready *metav1.Condition
	Eventually(t, DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		ready = conditions.Get(obj, meta.ReadyCondition)
		if !Handled(obj) || ready == nil {
			return false, "latest generation or request not handled yet"
		}
		return ready.Status == metav1.ConditionFalse && ready.Reason == reason, describeReady(obj)
	})
	return ready
}

// WaitHandled waits until obj has handled its latest generation and request,
// whatever the outcome.
func (e *Env) WaitHandled(t testing.TB, obj Reconciled) {
	t.Helper()
	Eventually(t, DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		return Handled(obj), "latest generation or request not handled yet"
	})
}

// AssertEvent waits for a Kubernetes Event about obj with reason and
// message.
func (e *Env) AssertEvent(t testing.TB, obj client.Object, reason, message string) {
	t.Helper()
	e.assertEvent(t, obj, reason, message, func(m string) bool { return m == message })
}

// AssertEventPrefix is AssertEvent for messages that start with prefix, for
// messages that carry durations.
func (e *Env) AssertEventPrefix(t testing.TB, obj client.Object, reason, prefix string) {
	t.Helper()
	e.assertEvent(t, obj, reason, prefix+"…", func(m string) bool { return strings.HasPrefix(m, prefix) })
}

func (e *Env) assertEvent(t testing.TB, obj client.Object, reason, message string, match func(string) bool) {
	t.Helper()
	Eventually(t, DefaultTimeout, func(ctx context.Context) (bool, string) {
		var list corev1.EventList
		if err := e.Client.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
			return false, err.Error()
		}
		for _, ev := range list.Items {
			if ev.InvolvedObject.Name == obj.GetName() && ev.Reason == reason && match(ev.Message) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no event %s %q among %d events", reason, message, len(list.Items))
	})
}

func describeReady(obj Reconciled) string {
	c := conditions.Get(obj, meta.ReadyCondition)
	if c == nil {
		return "no Ready condition"
	}
	return fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
}
