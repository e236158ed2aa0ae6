package fleetdiff

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// immutableFields are the fields the API server refuses to change in
// place, per kind (its validation of updates); a change to any of them
// between two manifests needs the object recreated. Fields a manifest
// leaves out on both sides keep what the cluster defaulted.
var immutableFields = map[schema.GroupKind][]string{
	{Group: "apps", Kind: "Deployment"}:  {"spec.selector"},
	{Group: "apps", Kind: "ReplicaSet"}:  {"spec.selector"},
	{Group: "apps", Kind: "DaemonSet"}:   {"spec.selector"},
	{Group: "apps", Kind: "StatefulSet"}: {"spec.selector", "spec.volumeClaimTemplates", "spec.serviceName", "spec.podManagementPolicy"},
	{Group: "batch", Kind: "Job"}:        {"spec.selector", "spec.template", "spec.completionMode"},
	{Kind: "PersistentVolumeClaim"}: {"spec.storageClassName", "spec.accessModes", "spec.volumeMode", "spec.volumeName",
		"spec.selector", "spec.dataSource", "spec.dataSourceRef"},
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        {"roleRef"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: {"roleRef"},
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                  {"provisioner", "parameters", "reclaimPolicy", "volumeBindingMode"},
}

// immutableChecks judge what a list of fields cannot: values that may be
// set once, sizes that may only grow, objects made immutable.
var immutableChecks = map[schema.GroupKind]func(before, after *unstructured.Unstructured) []string{
	{Kind: "Service"}:               serviceIPs,
	{Kind: "PersistentVolumeClaim"}: claimShrinks,
	{Kind: "ConfigMap"}:             sealedData,
	{Kind: "Secret"}:                sealedData,
}

// immutableChanges lists the fields changed from before to after that the
// API server will not change in place.
func immutableChanges(before, after *unstructured.Unstructured) []string {
	gk := after.GroupVersionKind().GroupKind()
	var out []string
	for _, f := range immutableFields[gk] {
		if !equality.Semantic.DeepEqual(field(before, f), field(after, f)) {
			out = append(out, f)
		}
	}
	if check := immutableChecks[gk]; check != nil {
		out = append(out, check(before, after)...)
	}
	return out
}

func field(o *unstructured.Unstructured, path string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(o.Object, strings.Split(path, ".")...)
	return v
}

// serviceIPs: a cluster IP the manifest sets cannot change (nor turn a
// headless Service into one with an IP, or back). A manifest that stops
// setting it keeps the allocated one; type changes to and from
// ExternalName are handled by the API server in place.
func serviceIPs(before, after *unstructured.Unstructured) []string {
	var out []string
	for _, f := range []string{"spec.clusterIP", "spec.clusterIPs"} {
		if a := field(after, f); a != nil && a != "" && !equality.Semantic.DeepEqual(field(before, f), a) {
			out = append(out, f)
		}
	}
	return out
}

// claimShrinks: a claim's requested storage may grow (when its class
// allows expansion), never shrink.
func claimShrinks(before, after *unstructured.Unstructured) []string {
	const f = "spec.resources.requests.storage"
	b, errB := resource.ParseQuantity(stringField(before, f))
	a, errA := resource.ParseQuantity(stringField(after, f))
	if errA == nil && errB == nil && a.Cmp(b) < 0 {
		return []string{f + " (shrunk)"}
	}
	return nil
}

// sealedData: a ConfigMap or Secret with immutable: true keeps its data
// and stays immutable.
func sealedData(before, after *unstructured.Unstructured) []string {
	if sealed, _, _ := unstructured.NestedBool(before.Object, "immutable"); !sealed {
		return nil
	}
	var out []string
	for _, f := range []string{"data", "binaryData", "stringData", "immutable"} {
		if !equality.Semantic.DeepEqual(field(before, f), field(after, f)) {
			out = append(out, f)
		}
	}
	return out
}

func stringField(o *unstructured.Unstructured, path string) string {
	s, _ := field(o, path).(string)
	return s
}
