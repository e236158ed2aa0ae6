package app

import (
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/yaml"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

const cachedKustomization = `
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: NAME
  namespace: apps
  finalizers: [finalizers.fluxcd.io]
  managedFields: [{manager: kubectl, operation: Apply}]
spec:
  interval: 10m
  path: ./app
  prune: true
  targetNamespace: apps
  sourceRef: {kind: GitRepository, name: fleet}
status:
  lastAppliedRevision: main@sha1:0123456789abcdef0123456789abcdef01234567
  lastAttemptedRevision: main@sha1:0123456789abcdef0123456789abcdef01234567
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, lastTransitionTime: "2026-01-01T00:00:00Z",
     message: "Applied revision: main@sha1:0123456789abcdef0123456789abcdef01234567"}
  history:
  - digest: sha256:DIGEST
    firstReconciled: "2026-01-01T00:00:00Z"
    lastReconciled: "2026-01-01T00:00:00Z"
    lastReconciledDuration: 1s
    lastReconciledStatus: ReconciliationSucceeded
    totalReconciliations: 1
    metadata: {revision: main@sha1:0123456789abcdef0123456789abcdef01234567}
  inventory:
    entries: [{id: apps_NAME-config__ConfigMap, v: v1}]
`

// Two Kustomizations of a fleet, decoded apart, come out of the cache's
// transform without managed fields and sharing the strings they repeat.
func TestCacheTransformStripsAndInterns(t *testing.T) {
	transform := cacheTransform(cache.TransformStripManagedFields())
	decode := func(name string) *kustomizev1.Kustomization {
		var k kustomizev1.Kustomization
		doc := []byte(cachedKustomization)
		if err := yaml.UnmarshalStrict(doc, &k); err != nil {
			t.Fatal(err)
		}
		k.Name, k.Status.History[0].Digest = name, "sha256:"+name
		out, err := transform(&k)
		if err != nil {
			t.Fatal(err)
		}
		return out.(*kustomizev1.Kustomization)
	}
	a, b := decode("a"), decode("b")
	if len(a.ManagedFields) != 0 {
		t.Errorf("managed fields kept: %v", a.ManagedFields)
	}
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	for _, p := range []struct{ what, x, y string }{
		{"namespace", a.Namespace, b.Namespace},
		{"finalizer", a.Finalizers[0], b.Finalizers[0]},
		{"source kind", a.Spec.SourceRef.Kind, b.Spec.SourceRef.Kind},
		{"source name", a.Spec.SourceRef.Name, b.Spec.SourceRef.Name},
		{"path", a.Spec.Path, b.Spec.Path},
		{"target namespace", a.Spec.TargetNamespace, b.Spec.TargetNamespace},
		{"applied revision", a.Status.LastAppliedRevision, b.Status.LastAppliedRevision},
		{"attempted revision", a.Status.LastAttemptedRevision, b.Status.LastAttemptedRevision},
		{"Ready message", a.Status.Conditions[0].Message, b.Status.Conditions[0].Message},
		{"Ready reason", a.Status.Conditions[0].Reason, b.Status.Conditions[0].Reason},
		{"history revision", a.Status.History[0].Metadata["revision"], b.Status.History[0].Metadata["revision"]},
		{"history reason", a.Status.History[0].LastReconciledStatus, b.Status.History[0].LastReconciledStatus},
		{"inventory version", a.Status.Inventory.Entries[0].Version, b.Status.Inventory.Entries[0].Version},
	} {
		if p.x != p.y || !same(p.x, p.y) {
			t.Errorf("%s %q not shared with %q", p.what, p.x, p.y)
		}
	}
	if a.Name != "a" || b.Status.History[0].Digest != "sha256:b" ||
		a.Status.Conditions[0].Status != metav1.ConditionTrue {
		t.Errorf("values changed: %s %s %s", a.Name, b.Status.History[0].Digest, a.Status.Conditions[0].Status)
	}
	if other, err := transform("not an object"); err != nil || other != "not an object" {
		t.Errorf("a non-object came out as %v, %v", other, err)
	}
}
