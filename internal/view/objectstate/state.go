package objectstate

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/weir-gitops/weir/api/meta"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
)

// The states of a toolkit object, the UI's words.
const (
	Ready   = "ready"
	Failing = "failing"
	// Waiting is Ready=False for want of a dependency (DependencyNotReady):
	// the object itself is fine, its dependsOn is not there yet; its root
	// cause is elsewhere, so it is not Failing.
	Waiting     = "waiting"
	Stalled     = "stalled"
	Reconciling = "reconciling"
	Suspended   = "suspended"
	Unknown     = "unknown"
)

// The states of any other object: kstatus's, lower-cased.
const (
	Current     = "current"
	InProgress  = "inprogress"
	Failed      = "failed"
	Terminating = "terminating"
	NotFound    = "notfound"
)

// ToolkitGroupSuffix ends the API group of every toolkit kind.
const ToolkitGroupSuffix = "toolkit.fluxcd.io"

// ExtensionsGroup is source-watcher's API group (ArtifactGenerator): a
// Flux kind outside the toolkit groups.
var ExtensionsGroup = sourceextensionsv1beta1.GroupVersion.Group

// IsFluxGroup reports whether group is one of Flux's API groups: a
// toolkit group or source-watcher's.
func IsFluxGroup(group string) bool {
	return strings.HasSuffix(group, ToolkitGroupSuffix) || group == ExtensionsGroup
}

// Ref names one object; Kind is the Flux kind name exactly.
type Ref struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String is Kind/namespace/name.
func (r Ref) String() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// Summary is one toolkit object as the overview lists it.
type Summary struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	State      string `json:"state"`
	Reason     string `json:"reason"`
	Message    string `json:"message"`
	Revision   string `json:"revision"`
	Suspended  bool   `json:"suspended"`
	// SuspendedBy is the field manager that last wrote spec.suspend
	// (set only while suspended).
	SuspendedBy string `json:"suspendedBy"`
	// SuspendReason is the suspend.toolkit.fluxcd.io/reason annotation.
	SuspendReason string `json:"suspendReason"`
	// LastTransition is the Ready condition's lastTransitionTime, RFC 3339.
	LastTransition string `json:"lastTransition"`
	// WaitingFor are the dependencies a waiting object names in its Ready
	// message (Flux's "dependency '<ns>/<name>' is not ready"), of its own
	// kind, as dependsOn refers to them.
	WaitingFor []Ref `json:"waitingFor,omitempty"`
	// Sync says how the object is out of sync, "" when it is not or it
	// cannot tell: a HelmRelease's Drifted condition ("drift detected"),
	// or, set by the fleet view which sees the source too, a Kustomization
	// whose source is ahead of what it applied.
	Sync string `json:"sync,omitempty"`
	// LastRun is when the controller last ran the object (RFC 3339) and
	// Interval its spec.interval in seconds (Schedule); the page counts
	// the next run from them. Both unset for a kind without an interval.
	LastRun  string `json:"lastRun,omitempty"`
	Interval int64  `json:"interval,omitempty"`
	// Shard is the object's sharding.fluxcd.io/key label: the controller
	// shard of Flux's sharding guide (`weir install --shards`) that
	// reconciles it; "" for the main controllers.
	Shard string `json:"shard,omitempty"`
}

// dependencyInMessage finds the dependencies Flux's DependencyNotReady
// messages name: "dependency '<namespace>/<name>' …".
var dependencyInMessage = regexp.MustCompile(`dependency '([^'/]+)/([^']+)'`)

// waitingFor reads the dependencies a waiting object's message names.
func waitingFor(kind, message string) []Ref {
	var out []Ref
	for _, m := range dependencyInMessage.FindAllStringSubmatch(message, -1) {
		out = append(out, Ref{Kind: kind, Namespace: m[1], Name: m[2]})
	}
	return out
}

// Conditions decodes status.conditions; malformed entries are skipped.
func Conditions(u *unstructured.Unstructured) []metav1.Condition {
	raw, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "conditions")
	list, _ := raw.([]any)
	out := make([]metav1.Condition, 0, len(list))
	for _, r := range list {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		if c, ok := conditionOf(m); ok {
			out = append(out, c)
			continue
		}
		var c metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// conditionOf reads a well-formed condition (string fields, an int64
// observedGeneration, an RFC 3339 lastTransitionTime) as the converter
// would, without its reflection, which was most of /api/overview's cost;
// ok is false for anything else, left to the converter.
func conditionOf(m map[string]any) (c metav1.Condition, ok bool) {
	str := func(key string, into *string) bool {
		v, present := m[key]
		if !present {
			return true
		}
		*into, ok = v.(string)
		return ok
	}
	var status, ltt string
	if !str("type", &c.Type) || !str("status", &status) || !str("reason", &c.Reason) ||
		!str("message", &c.Message) || !str("lastTransitionTime", &ltt) {
		return c, false
	}
	c.Status = metav1.ConditionStatus(status)
	if g, present := m["observedGeneration"]; present {
		if c.ObservedGeneration, ok = g.(int64); !ok {
			return c, false
		}
	}
	if ltt != "" {
		t, err := time.Parse(time.RFC3339, ltt)
		if err != nil {
			return c, false
		}
		c.LastTransitionTime = metav1.NewTime(t.Local())
	}
	for k := range m {
		switch k {
		case "type", "status", "reason", "message", "lastTransitionTime", "observedGeneration":
		default:
			return c, false // unknown to the fast path: the converter decides
		}
	}
	return c, true
}

// Of is the state of toolkit object u: suspended (spec.suspend, or an
// ArtifactGenerator's reconcile annotation) first,
// then Stalled=True is stalled, Ready=False for DependencyNotReady
// waiting, any other Ready=False failing, Reconciling=True or
// Ready=Unknown or status.observedGeneration behind metadata.generation
// reconciling, Ready=True ready, and anything else unknown. A kind no
// controller writes a status for (Alert, Provider, an OCI HelmRepository:
// Flux's static objects) is ready while it has no Ready condition, as
// `flux get` shows it.
func Of(u *unstructured.Unstructured) string { return of(u, Conditions(u)) }

// of is Of with u's conditions already decoded.
func of(u *unstructured.Unstructured, conds []metav1.Condition) string {
	if IsSuspended(u) {
		return Suspended
	}
	ready := apimeta.FindStatusCondition(conds, meta.ReadyCondition)
	switch {
	case apimeta.IsStatusConditionTrue(conds, meta.StalledCondition):
		return Stalled
	case ready != nil && ready.Status == metav1.ConditionFalse && ready.Reason == meta.DependencyNotReadyReason:
		return Waiting
	case ready != nil && ready.Status == metav1.ConditionFalse:
		return Failing
	case apimeta.IsStatusConditionTrue(conds, meta.ReconcilingCondition),
		ready != nil && ready.Status == metav1.ConditionUnknown,
		generationBehind(u):
		return Reconciling
	case ready != nil && ready.Status == metav1.ConditionTrue:
		return Ready
	case ready == nil && static(u):
		return Ready
	}
	return Unknown
}

// IsSuspended reports spec.suspend, or for source-watcher's kind (which has
// no spec.suspend) its reconcile annotation set to disabled.
func IsSuspended(u *unstructured.Unstructured) bool {
	if u.GroupVersionKind().Group == ExtensionsGroup {
		return strings.EqualFold(u.GetAnnotations()[sourceextensionsv1beta1.ReconcileAnnotation], sourceextensionsv1beta1.DisabledValue)
	}
	s, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend")
	return s
}

// generationBehind reports a status.observedGeneration older than the
// object's generation: the controller has not seen the latest spec.
func generationBehind(u *unstructured.Unstructured) bool {
	g, ok, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	return ok && g < u.GetGeneration()
}

// static reports a kind that has no reconciler writing its status.
func static(u *unstructured.Unstructured) bool {
	gk := u.GroupVersionKind().GroupKind()
	if gk.Group == "notification.toolkit.fluxcd.io" && (gk.Kind == "Alert" || gk.Kind == "Provider") {
		return true
	}
	t, _, _ := unstructured.NestedString(u.Object, "spec", "type")
	return gk.Group == "source.toolkit.fluxcd.io" && gk.Kind == "HelmRepository" && t == "oci"
}

// Live is the kstatus word of any object (current, inprogress, failed,
// terminating, unknown); a toolkit object gets Of's word instead.
func Live(u *unstructured.Unstructured) string {
	if IsFluxGroup(u.GroupVersionKind().Group) {
		return Of(u)
	}
	res, err := status.Compute(u)
	if err != nil {
		return Unknown
	}
	return strings.ToLower(string(res.Status))
}

// Summarize is u's Summary: its state, the reason and message of the
// condition that decided it (Stalled when stalled, else Ready), its
// revision, and who suspended it and why.
func Summarize(u *unstructured.Unstructured) Summary {
	conds := Conditions(u)
	s := Summary{
		Kind: u.GetKind(), APIVersion: u.GetAPIVersion(), Namespace: u.GetNamespace(), Name: u.GetName(),
		State: of(u, conds), Revision: Revision(u),
	}
	ready := apimeta.FindStatusCondition(conds, meta.ReadyCondition)
	shown := ready
	if stalled := apimeta.FindStatusCondition(conds, meta.StalledCondition); stalled != nil && stalled.Status == metav1.ConditionTrue {
		shown = stalled
	}
	if shown != nil {
		s.Reason, s.Message = shown.Reason, shown.Message
	}
	if ready != nil && !ready.LastTransitionTime.IsZero() {
		s.LastTransition = ready.LastTransitionTime.UTC().Format(time.RFC3339)
	}
	if s.State == Waiting {
		s.WaitingFor = waitingFor(s.Kind, ready.Message)
	}
	if d := apimeta.FindStatusCondition(conds, "Drifted"); d != nil && d.Status == metav1.ConditionTrue {
		s.Sync = "drift detected"
		if !d.LastTransitionTime.IsZero() {
			s.Sync += " " + d.LastTransitionTime.UTC().Format(time.RFC3339)
		}
	}
	Schedule(u, &s)
	s.Shard = u.GetLabels()[meta.ShardKeyLabel]
	s.Suspended = IsSuspended(u)
	if s.Suspended {
		s.SuspendedBy = suspendedBy(u)
		s.SuspendReason = u.GetAnnotations()[meta.SuspendReasonAnnotation]
	}
	return s
}

// Revision is what u is at: a Kustomization's last applied revision, a
// source's artifact revision, a HelmRelease's newest chart version (else
// the last attempted one), an ImagePolicy's latest image. A Kustomization
// that never applied has none.
func Revision(u *unstructured.Unstructured) string {
	for _, path := range [][]string{
		{"status", "lastAppliedRevision"},
		{"status", "artifact", "revision"},
	} {
		if s, _, _ := unstructured.NestedString(u.Object, path...); s != "" {
			return s
		}
	}
	// Read in place: a HelmRelease's history is long, and NestedSlice
	// would copy it.
	raw, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "history")
	if history, _ := raw.([]any); len(history) > 0 {
		if latest, ok := history[0].(map[string]any); ok {
			if v, ok := latest["chartVersion"].(string); ok && v != "" {
				return v
			}
		}
	}
	return lastAttempted(u)
}

// lastAttempted is Revision's end: a HelmRelease's last attempted
// revision, an ImagePolicy's latest image.
func lastAttempted(u *unstructured.Unstructured) string {
	if s, _, _ := unstructured.NestedString(u.Object, "status", "lastAttemptedRevision"); s != "" && u.GetKind() == "HelmRelease" {
		return s
	}
	ref, _, _ := unstructured.NestedStringMap(u.Object, "status", "latestRef")
	if ref["name"] != "" {
		return ref["name"] + ":" + ref["tag"]
	}
	return ""
}

// suspendedBy is the field manager of the newest managedFields entry that
// owns spec.suspend ("" for an ArtifactGenerator, suspended by annotation).
func suspendedBy(u *unstructured.Unstructured) string {
	var by string
	var at time.Time
	for _, mf := range u.GetManagedFields() {
		if mf.FieldsV1 == nil || !ownsSuspend(mf.FieldsV1.GetRawBytes()) {
			continue
		}
		t := time.Time{}
		if mf.Time != nil {
			t = mf.Time.Time
		}
		if by == "" || !t.Before(at) {
			by, at = mf.Manager, t
		}
	}
	return by
}

// ownsSuspend reports whether a managedFields set holds spec.suspend.
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
