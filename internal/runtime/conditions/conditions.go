// Package conditions reads and writes metav1.Conditions on weir objects with
// Flux's semantics: Ready is always present; Reconciling and Stalled are
// "abnormal-true" and exist only while True, which is how kstatus tells a
// converging object from a stuck one.
package conditions

import (
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// Object is a Kubernetes object with conditions.
type Object interface {
	metav1.Object
	meta.ObjectWithConditions
}

// Set adds or updates the condition t on obj. The transition time changes
// only when the status does.
func Set(obj Object, t string, status metav1.ConditionStatus, reason, messageFormat string, args ...any) {
	conds := obj.GetConditions()
	apimeta.SetStatusCondition(&conds, metav1.Condition{
		Type:               t,
		Status:             status,
		Reason:             reason,
		Message:            trim(fmt.Sprintf(messageFormat, args...)),
		ObservedGeneration: obj.GetGeneration(),
	})
	obj.SetConditions(conds)
}

// MarkTrue sets t to True.
func MarkTrue(obj Object, t, reason, messageFormat string, args ...any) {
	Set(obj, t, metav1.ConditionTrue, reason, messageFormat, args...)
}

// MarkFalse sets t to False.
func MarkFalse(obj Object, t, reason, messageFormat string, args ...any) {
	Set(obj, t, metav1.ConditionFalse, reason, messageFormat, args...)
}

// MarkUnknown sets t to Unknown.
func MarkUnknown(obj Object, t, reason, messageFormat string, args ...any) {
	Set(obj, t, metav1.ConditionUnknown, reason, messageFormat, args...)
}

// Delete removes t.
func Delete(obj Object, t string) {
	conds := obj.GetConditions()
	apimeta.RemoveStatusCondition(&conds, t)
	obj.SetConditions(conds)
}

// Get returns condition t, or nil.
func Get(obj Object, t string) *metav1.Condition {
	return apimeta.FindStatusCondition(obj.GetConditions(), t)
}

// IsTrue reports whether t is True.
func IsTrue(obj Object, t string) bool {
	return apimeta.IsStatusConditionTrue(obj.GetConditions(), t)
}

// IsReady reports whether Ready is True for the object's current generation.
func IsReady(obj Object) bool {
	c := Get(obj, meta.ReadyCondition)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.GetGeneration()
}

// MarkReconciling records that work towards a new state has begun: Ready
// becomes Unknown with the same message, and Stalled goes away.
func MarkReconciling(obj Object, reason, messageFormat string, args ...any) {
	MarkTrue(obj, meta.ReconcilingCondition, reason, messageFormat, args...)
	Delete(obj, meta.StalledCondition)
	MarkUnknown(obj, meta.ReadyCondition, reason, messageFormat, args...)
}

// MarkStalled records that no progress is possible without a change to the
// object: Ready is False with the same reason, Reconciling goes away.
func MarkStalled(obj Object, reason, messageFormat string, args ...any) {
	MarkTrue(obj, meta.StalledCondition, reason, messageFormat, args...)
	Delete(obj, meta.ReconcilingCondition)
	MarkFalse(obj, meta.ReadyCondition, reason, messageFormat, args...)
}

// MarkReady records success: Ready True, no Reconciling, no Stalled.
func MarkReady(obj Object, reason, messageFormat string, args ...any) {
	Delete(obj, meta.ReconcilingCondition)
	Delete(obj, meta.StalledCondition)
	MarkTrue(obj, meta.ReadyCondition, reason, messageFormat, args...)
}

// MarkFailed records a failure that will be retried: Ready False, and
// Reconciling True with reason ProgressingWithRetry so kstatus reports the
// object as in progress rather than failed for good.
func MarkFailed(obj Object, reason, messageFormat string, args ...any) {
	Delete(obj, meta.StalledCondition)
	MarkFalse(obj, meta.ReadyCondition, reason, messageFormat, args...)
	MarkTrue(obj, meta.ReconcilingCondition, meta.ProgressingWithRetryReason, messageFormat, args...)
}

// MarkError records err with reason: stalled when errs.IsStalling says
// retrying cannot help, failed (and retried) otherwise.
func MarkError(obj Object, reason string, err error) {
	if errs.IsStalling(err) {
		MarkStalled(obj, reason, "%s", err)
		return
	}
	MarkFailed(obj, reason, "%s", err)
}

// maxMessage is the CRD's maxLength for a condition message.
const maxMessage = 32768

func trim(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	return msg[:maxMessage-3] + "..."
}
