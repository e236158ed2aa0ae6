package fleetview

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/cli/kinds"
)

// SuspendReasonAnnotation records why an object was suspended, as the flux
// CLI's `suspend --reason` writes it.
const SuspendReasonAnnotation = "suspend.toolkit.fluxcd.io/reason"

// States, as the contract names them.
const (
	StateReady       = "ready"
	StateFailing     = "failing"
	StateStalled     = "stalled"
	StateReconciling = "reconciling"
	StateSuspended   = "suspended"
	StateUnknown     = "unknown"
)

// States lists every state in the order the overview counts them.
var States = []string{StateReady, StateFailing, StateStalled, StateReconciling, StateSuspended, StateUnknown}

// Ref names one toolkit object.
type Ref struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// ID is the graph's node id of r: Kind/namespace/name.
func (r Ref) ID() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// Summary is one object as the overview lists it.
type Summary struct {
	Kind           string `json:"kind"`
	APIVersion     string `json:"apiVersion"`
	Namespace      string `json:"namespace"`
	Name           string `json:"name"`
	State          string `json:"state"`
	Reason         string `json:"reason"`
	Message        string `json:"message"`
	Revision       string `json:"revision"`
	Suspended      bool   `json:"suspended"`
	SuspendedBy    string `json:"suspendedBy"`
	SuspendReason  string `json:"suspendReason"`
	LastTransition string `json:"lastTransition"`
}

// Ref is the object the summary describes.
func (s Summary) Ref() Ref { return Ref{Kind: s.Kind, Namespace: s.Namespace, Name: s.Name} }

// State is the contract's one rule for an object's state: suspended; else
// Stalled=True is stalled; else Ready=False is failing; else Reconciling=True,
// Ready=Unknown or a generation the controller has not observed yet is
// reconciling; else Ready=True is ready; else unknown. A kind no controller
// reports on (Alert, Provider) is ready unless suspended, as the flux CLI
// shows it.
func State(u *unstructured.Unstructured) string {
	if kinds.Suspended(u) {
		return StateSuspended
	}
	if k, ok := kinds.ByKind(u.GetKind()); ok && k.Static(u) {
		return StateReady
	}
	if kinds.StatusMatches(u, meta.StalledCondition, string(metav1.ConditionTrue)) {
		return StateStalled
	}
	ready := kinds.Condition(u, meta.ReadyCondition)
	if ready != nil && ready.Status == metav1.ConditionFalse {
		return StateFailing
	}
	if kinds.StatusMatches(u, meta.ReconcilingCondition, string(metav1.ConditionTrue)) ||
		(ready != nil && ready.Status == metav1.ConditionUnknown) ||
		kinds.ObservedGeneration(u) < u.GetGeneration() {
		return StateReconciling
	}
	if ready != nil && ready.Status == metav1.ConditionTrue {
		return StateReady
	}
	return StateUnknown
}

// Summarize computes u's Summary.
func Summarize(u *unstructured.Unstructured) Summary {
	s := Summary{
		Kind: u.GetKind(), APIVersion: u.GetAPIVersion(), Namespace: u.GetNamespace(), Name: u.GetName(),
		State: State(u), Suspended: kinds.Suspended(u),
	}
	if k, ok := kinds.ByKind(u.GetKind()); ok {
		s.Revision = k.Revision(u)
	}
	if ready := kinds.Condition(u, meta.ReadyCondition); ready != nil {
		s.Reason, s.Message = ready.Reason, ready.Message
		if !ready.LastTransitionTime.IsZero() {
			s.LastTransition = ready.LastTransitionTime.UTC().Format(time.RFC3339)
		}
	}
	if s.Suspended {
		s.SuspendedBy = SuspendedBy(u)
		s.SuspendReason = u.GetAnnotations()[SuspendReasonAnnotation]
	}
	return s
}

// SuspendedBy is the field manager that owns spec.suspend in u's
// managedFields, the latest writer when several share it; "" when none does.
func SuspendedBy(u *unstructured.Unstructured) string {
	by, at := "", time.Time{}
	for _, mf := range u.GetManagedFields() {
		if mf.FieldsV1 == nil || !ownsSuspend(mf.FieldsV1.GetRawBytes()) {
			continue
		}
		var t time.Time
		if mf.Time != nil {
			t = mf.Time.Time
		}
		if by == "" || t.After(at) {
			by, at = mf.Manager, t
		}
	}
	return by
}

// ownsSuspend reports whether a FieldsV1 set holds spec.suspend.
func ownsSuspend(raw []byte) bool {
	var fields struct {
		Spec map[string]json.RawMessage `json:"f:spec"`
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return false
	}
	_, ok := fields.Spec["f:suspend"]
	return ok
}
