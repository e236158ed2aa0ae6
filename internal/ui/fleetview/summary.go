package fleetview

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/internal/view/objectstate"
)

// States, as the contract names them (objectstate's words).
const (
	StateReady       = objectstate.Ready
	StateFailing     = objectstate.Failing
	StateWaiting     = objectstate.Waiting
	StateStalled     = objectstate.Stalled
	StateReconciling = objectstate.Reconciling
	StateSuspended   = objectstate.Suspended
	StateUnknown     = objectstate.Unknown
)

// Ref names one toolkit object.
type Ref = objectstate.Ref

// Summary is one object as the overview lists it.
type Summary = objectstate.Summary

// State is the contract's one rule for an object's state, objectstate's:
// the overview, the graph and the object page never disagree.
func State(u *unstructured.Unstructured) string { return objectstate.Of(u) }

// Summarize computes u's Summary, as the object page does.
func Summarize(u *unstructured.Unstructured) Summary { return objectstate.Summarize(u) }

// refOf is u's Ref.
func refOf(u *unstructured.Unstructured) Ref {
	return Ref{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// summaryRef is s's Ref.
func summaryRef(s Summary) Ref { return Ref{Kind: s.Kind, Namespace: s.Namespace, Name: s.Name} }
