package fleetdiff

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

func ks(name string) Key { return Key{Kind: KustomizationKind, Namespace: "flux-system", Name: name} }

func objs(t *testing.T, manifests ...string) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(manifests))
	for i, m := range manifests {
		out[i] = obj(t, m)
	}
	return out
}

const (
	nsApps    = "apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}"
	nsLegacy  = "apiVersion: v1\nkind: Namespace\nmetadata: {name: legacy}"
	crdWidget = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}"
	cmOld     = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old, namespace: apps}\ndata: {a: '1'}"
	cmKept    = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept, namespace: apps, annotations: {kustomize.toolkit.fluxcd.io/prune: disabled}}"
	cmMoved   = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: moved, namespace: apps}"
	secret1   = "apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: apps}\nstringData: {token: hunter2}"
	secret2   = "apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: apps}\nstringData: {token: correct-horse}"
	ksApps    = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec: {prune: true}"
	ksLegacy  = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: legacy, namespace: flux-system}\nspec: {prune: true}"
	hrHello   = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: hello, namespace: apps}"
	ksOrphan  = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: orphan, namespace: flux-system}\nspec: {prune: true}"
)

func deployment(image, app string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: apps}\nspec:\n  selector: {matchLabels: {app: " + app +
		"}}\n  template:\n    metadata: {labels: {app: " + app + "}}\n    spec: {containers: [{name: web, image: '" + image + "'}]}"
}

// fixture is a fleet before and after a change that exercises every rule
// and a near miss of each.
func fixture(t *testing.T) (base, head Side) {
	root := ks("flux-system")
	infra := &Node{Key: ks("infra"), File: "clusters/dev/infra.yaml", Line: 1, Prune: true, Parent: &root,
		Objects: objs(t, nsApps, crdWidget, cmOld, cmKept, cmMoved)}
	apps := &Node{Key: ks("apps"), File: "clusters/dev/apps.yaml", Line: 1, Prune: true, Parent: &root,
		Objects: objs(t, deployment("web:1", "web"), secret1)}
	legacy := &Node{Key: ks("legacy"), File: "clusters/dev/legacy.yaml", Line: 3, Prune: true, Parent: &root,
		Objects: objs(t, nsLegacy, cmOld)}
	// orphan's parent does not prune: removing it leaves its objects.
	keeper := &Node{Key: ks("keeper"), File: "clusters/dev/keeper.yaml", Parent: &root, Objects: objs(t, ksOrphan)}
	keeperRef := keeper.Key
	orphan := &Node{Key: ks("orphan"), Prune: true, Parent: &keeperRef, Objects: objs(t, nsLegacy)}
	same := &Node{Key: ks("same"), Prune: true, Parent: &root, Digest: "sha256:1", Objects: objs(t, cmOld)}
	broken := &Node{Key: ks("broken"), Parent: &root, Objects: objs(t, cmOld)}
	hr := &Node{Key: Key{Kind: HelmReleaseKind, Namespace: "apps", Name: "hello"}, Parent: &root, Object: obj(t, hrHello),
		Skipped: "the chart comes from HelmRepository flux-system/charts, which is not available offline"}
	rootNode := &Node{Key: root, File: "clusters/dev/flux-system/sync.yaml", Prune: true,
		Objects: objs(t, ksApps, ksLegacy)}
	base = Side{Revision: "main@sha1:1111111", Nodes: []*Node{rootNode, infra, apps, legacy, keeper, orphan, same, broken, hr}}

	rootHead := &Node{Key: root, File: rootNode.File, Prune: true, Objects: objs(t, ksApps)}
	infraHead := &Node{Key: infra.Key, File: infra.File, Line: 1, Prune: true, Parent: &root, Objects: objs(t, nsApps)}
	appsHead := &Node{Key: apps.Key, File: apps.File, Line: 1, Prune: true, Parent: &root,
		Objects: objs(t, deployment("web:2", "website"), secret2, cmMoved)}
	keeperHead := &Node{Key: keeper.Key, File: keeper.File, Parent: &root}
	sameHead := &Node{Key: same.Key, Prune: true, Parent: &root, Digest: "sha256:1", Objects: objs(t, cmOld)}
	brokenHead := &Node{Key: broken.Key, File: "clusters/dev/broken.yaml", Line: 7, Parent: &root, Err: errors.New("kustomize build failed: missing.yaml: no such file")}
	hrHead := &Node{Key: hr.Key, Parent: &root, Skipped: hr.Skipped, Object: obj(t, hrHello+"\nspec: {values: {replicas: 2}}")}
	// A node not rendered and unchanged is no change.
	hrSame := &Node{Key: Key{Kind: HelmReleaseKind, Namespace: "apps", Name: "same"}, Parent: &root, Skipped: hr.Skipped, Object: obj(t, hrHello)}
	base.Nodes = append(base.Nodes, hrSame)
	head = Side{Revision: "working tree", Nodes: []*Node{rootHead, infraHead, appsHead, keeperHead, sameHead, brokenHead, hrHead, hrSame}}
	return base, head
}

func TestCompareDangers(t *testing.T) {
	base, head := fixture(t)
	r, err := Compare(base, head)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Rule, Node, Object string }
	var got []row
	for _, d := range r.Dangers {
		got = append(got, row{d.Rule, d.Node.String(), d.Object})
	}
	want := []row{
		{RuleImmutableField, "Kustomization/flux-system/apps", "Deployment/apps/web"},
		{RulePruneDelete, "Kustomization/flux-system/flux-system", "Kustomization/flux-system/legacy"},
		{RulePruneDelete, "Kustomization/flux-system/infra", "ConfigMap/apps/moved"},
		{RulePruneDelete, "Kustomization/flux-system/infra", "ConfigMap/apps/old"},
		{RuleCRDDelete, "Kustomization/flux-system/infra", "CustomResourceDefinition/widgets.example.com"},
		{RuleRemovedWithPrune, "Kustomization/flux-system/legacy", ""},
		{RuleNamespaceDelete, "Kustomization/flux-system/legacy", "Namespace/legacy"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dangers (-want +got):\n%s", diff)
	}
	if !r.HasChanges() || !r.HasFailures() {
		t.Errorf("HasChanges %v, HasFailures %v; want both", r.HasChanges(), r.HasFailures())
	}
	if r.Reused != 1 {
		t.Errorf("Reused = %d, want 1 (same's digest did not change)", r.Reused)
	}
	for _, d := range r.Dangers {
		if d.Object == "ConfigMap/apps/moved" && !strings.Contains(d.Message, "Kustomization/flux-system/apps applies it at head") {
			t.Errorf("moved object: %s", d.Message)
		}
	}
}

func TestCompareNoChange(t *testing.T) {
	base, _ := fixture(t)
	r, err := Compare(base, base)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range r.Nodes {
		t.Errorf("%s: %s, want no report", n.Key, n.Status)
	}
	if len(r.Dangers) != 0 || r.HasFailures() || r.HasChanges() {
		t.Errorf("dangers %v, failures %v", r.Dangers, r.HasFailures())
	}
}

// TestWrite keeps the three formats of the fixture's report as golden
// files.
func TestWrite(t *testing.T) {
	base, head := fixture(t)
	r, err := Compare(base, head)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range Formats {
		var buf bytes.Buffer
		if err := Write(&buf, r, format); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "hunter2") || strings.Contains(buf.String(), "correct-horse") {
			t.Errorf("%s output shows a Secret value", format)
		}
		golden.Assert(t, filepath.Join("testdata", "report."+format), buf.Bytes())
	}
	if err := Write(&bytes.Buffer{}, r, "yaml"); err == nil {
		t.Error("an unknown format was accepted")
	}
}
