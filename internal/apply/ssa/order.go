package ssa

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// stage is one of the groups Apply writes one after the other. Flux's
// ApplyAllStaged (fluxcd/pkg ssa) has the same four, decided by the same
// rules, in the same precedence.
type stage int

const (
	// stageDefinitions: CustomResourceDefinitions, Namespaces and
	// ClusterRoles. Everything after may depend on them, so Apply waits for
	// them to be ready (CRDs Established, Namespaces Active).
	stageDefinitions stage = iota
	// stageClasses: every kind whose name ends in "Class" (StorageClass,
	// IngressClass, GatewayClass, ClusterClass, custom ones too), which the
	// objects of later stages refer to.
	stageClasses
	// stageCustom: the kinds of ApplyOptions.CustomStageKinds
	// (--custom-apply-stage-kinds), for example Roles ahead of the
	// RoleBindings that a non-admin identity may only create once the
	// Role exists.
	stageCustom
	// stageRest: everything else.
	stageRest
	stageCount
)

// stageOf returns the stage of an object of kind gk. The checks mirror
// Flux's: the definition kinds must be in their own group (a CRD-defined
// kind named "Namespace" in another group is an ordinary object), the class
// rule is a case-sensitive suffix and wins over the custom stage.
func stageOf(gk schema.GroupKind, custom map[schema.GroupKind]bool) stage {
	switch {
	case isDefinition(gk):
		return stageDefinitions
	case strings.HasSuffix(gk.Kind, "Class"):
		return stageClasses
	case custom[gk]:
		return stageCustom
	default:
		return stageRest
	}
}

func isDefinition(gk schema.GroupKind) bool {
	switch {
	case gk.Group == "apiextensions.k8s.io" && gk.Kind == "CustomResourceDefinition":
		return true
	case gk.Group == "" && gk.Kind == "Namespace":
		return true
	case gk.Group == "rbac.authorization.k8s.io" && gk.Kind == "ClusterRole":
		return true
	}
	return false
}

// kindsFirst and kindsLast are Flux's ReconcileOrder (fluxcd/pkg
// ssa/sort.go): within a stage, objects of these kinds go first or last in
// this order, every other kind in between. The rank is by kind name alone,
// whatever the group.
var (
	kindsFirst = []string{
		"CustomResourceDefinition",
		"Namespace",
		"ClusterClass",
		"RuntimeClass",
		"PriorityClass",
		"StorageClass",
		"VolumeSnapshotClass",
		"IngressClass",
		"GatewayClass",
		"ResourceQuota",
		"ServiceAccount",
		"Role",
		"ClusterRole",
		"RoleBinding",
		"ClusterRoleBinding",
		"ConfigMap",
		"Secret",
		"Service",
		"LimitRange",
		"Deployment",
		"StatefulSet",
		"CronJob",
		"PodDisruptionBudget",
	}
	kindsLast = []string{
		"MutatingWebhookConfiguration",
		"ValidatingWebhookConfiguration",
	}
)

// kindRank is negative for kindsFirst, positive for kindsLast, 0 for the
// rest.
func kindRank(kind string) int {
	if i := slices.Index(kindsFirst, kind); i >= 0 {
		return i - len(kindsFirst)
	}
	if i := slices.Index(kindsLast, kind); i >= 0 {
		return i + 1
	}
	return 0
}

// compareKinds orders two kinds as Flux's IsLessThan does: rank, then
// group, then kind.
func compareKinds(a, b schema.GroupKind) int {
	if ra, rb := kindRank(a.Kind), kindRank(b.Kind); ra != rb {
		return ra - rb
	}
	if c := strings.Compare(a.Group, b.Group); c != 0 {
		return c
	}
	return strings.Compare(a.Kind, b.Kind)
}

// compareObjects orders objects within a stage: kind, then namespace, then
// name, so the order never depends on the order of the input.
func compareObjects(a, b ObjMetadata) int {
	if c := compareKinds(a.GroupKind, b.GroupKind); c != 0 {
		return c
	}
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// applyOrder compares two objects by stage first, then within the stage.
func applyOrder(custom map[schema.GroupKind]bool) func(a, b ObjMetadata) int {
	return func(a, b ObjMetadata) int {
		if sa, sb := stageOf(a.GroupKind, custom), stageOf(b.GroupKind, custom); sa != sb {
			return int(sa) - int(sb)
		}
		return compareObjects(a, b)
	}
}

// SortInApplyOrder sorts objects the way Apply writes them (without custom
// stage kinds): definitions, classes, the rest; within each, Flux's kind
// order, then namespace and name. Prune deletes in the reverse order.
func SortInApplyOrder(objects []ObjMetadata) {
	slices.SortStableFunc(objects, applyOrder(nil))
}
