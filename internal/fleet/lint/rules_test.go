package lint

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/internal/fleet"
	"github.com/weir-gitops/weir/internal/kustomize"
)

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// ksNode is a Kustomization node named name with dependsOn deps and the
// spec lines extra.
func ksNode(t *testing.T, name string, deps []string, extra string) *fleet.Node {
	t.Helper()
	doc := fmt.Sprintf("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: %s, namespace: ns}\nspec:\n  path: ./%s\n  sourceRef: {kind: GitRepository, name: repo}\n%s", name, name, extra)
	for i, d := range deps {
		if i == 0 {
			doc += "  dependsOn:\n"
		}
		doc += "    - name: " + d + "\n"
	}
	n, err := fleet.NewNode(object(t, doc), fleet.Position{File: name + ".yaml", Line: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n.Built = true
	return n
}

func cluster(nodes ...*fleet.Node) *fleet.Cluster {
	c := &fleet.Cluster{Entry: "clusters/x", Nodes: nodes, Root: nodes[0], Applied: map[string][]*fleet.Node{},
		Sources: map[string]*fleet.Source{"GitRepository/ns/repo": {}}}
	for _, n := range nodes {
		for _, o := range n.Objects {
			c.Applied[fleet.Key(o)] = append(c.Applied[fleet.Key(o)], n)
		}
	}
	return c
}

// applies makes n apply obj, from file.
func applies(n *fleet.Node, obj *unstructured.Unstructured, file string) {
	n.Objects = append(n.Objects, obj)
	n.Origins = append(n.Origins, fleet.Position{File: file, Line: 1})
}

const varsCM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vars, namespace: ns}\n"
const substitutes = "  postBuild:\n    substituteFrom:\n      - {kind: ConfigMap, name: vars}\n"

func TestSubstitutionRace(t *testing.T) {
	for _, tt := range []struct {
		name        string
		deps        []string // of the substituting Kustomization "app"
		missingRoot bool
		want        int
	}{
		{"not ordered", nil, false, 1},
		{"ordered directly", []string{"root"}, false, 0},
		{"ordered through another", []string{"mid"}, false, 0},
		{"ordered after something else", []string{"other"}, false, 1},
		{"applier is an unsynced root", nil, true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := ksNode(t, "root", nil, "")
			applies(root, object(t, varsCM), "vars.yaml")
			mid := ksNode(t, "mid", []string{"root"}, "")
			other := ksNode(t, "other", nil, "")
			app := ksNode(t, "app", tt.deps, substitutes)
			c := cluster(root, mid, other, app)
			c.MissingRoot = tt.missingRoot
			if got := substitutionRace(c, Options{}); len(got) != tt.want {
				t.Errorf("findings = %+v, want %d", got, tt.want)
			}
		})
	}
}

func TestSubstitutionRaceSelf(t *testing.T) {
	root := ksNode(t, "root", nil, "")
	app := ksNode(t, "app", nil, substitutes)
	applies(app, object(t, varsCM), "vars.yaml")
	if got := substitutionRace(cluster(root, app), Options{}); len(got) != 0 {
		t.Errorf("a Kustomization reading what it applies itself is not a race: %+v", got)
	}
}

func TestToolkitObject(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want bool
	}{
		{"apiVersion: v1\nkind: Namespace\nmetadata: {name: flux-system}", true},
		{"apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}", false},
		{"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: kustomizations.kustomize.toolkit.fluxcd.io}\nspec: {group: kustomize.toolkit.fluxcd.io}", true},
		{"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: certificates.cert-manager.io}\nspec: {group: cert-manager.io}", false},
		{"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: helm-controller, namespace: flux-system}", true},
		{"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: weir-controller, namespace: weir, labels: {app.kubernetes.io/part-of: weir}}", true},
		{"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: source-controller, namespace: apps}", false},
		{"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: podinfo, namespace: flux-system}", false},
	} {
		if got := toolkitObject(object(t, tt.doc)); got != tt.want {
			t.Errorf("toolkitObject(%q) = %v, want %v", tt.doc, got, tt.want)
		}
	}
}

func TestPruneControllersSparesRootAndPruneFalse(t *testing.T) {
	ns := "apiVersion: v1\nkind: Namespace\nmetadata: {name: flux-system}"
	root := ksNode(t, "root", nil, "  prune: true\n")
	applies(root, object(t, ns), "a.yaml")
	keep := ksNode(t, "keep", nil, "  prune: false\n")
	applies(keep, object(t, ns), "b.yaml")
	pruned := ksNode(t, "pruned", nil, "  prune: true\n")
	applies(pruned, object(t, ns), "c.yaml")
	got := pruneControllers(cluster(root, keep, pruned), Options{})
	if len(got) != 1 || got[0].Object != "Kustomization/ns/pruned" || got[0].File != "c.yaml" {
		t.Errorf("findings = %+v, want one for pruned at c.yaml", got)
	}
}

func TestDuplicateObject(t *testing.T) {
	a, b := ksNode(t, "a", nil, ""), ksNode(t, "b", nil, "")
	applies(a, object(t, varsCM), "a.yaml")
	applies(b, object(t, varsCM), "b.yaml")
	got := duplicateObject(cluster(a, b), Options{})
	if len(got) != 1 || got[0].Object != "ConfigMap/ns/vars" || got[0].File != "b.yaml" {
		t.Errorf("findings = %+v, want one at the second applier's file", got)
	}
	if got := duplicateObject(cluster(a), Options{}); len(got) != 0 {
		t.Errorf("one applier: %+v", got)
	}
}

func TestRemovedAPI(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want int
	}{
		{"apiVersion: kustomize.toolkit.fluxcd.io/v1beta2\nkind: Kustomization\nmetadata: {name: x, namespace: ns}", 1},
		{"apiVersion: helm.toolkit.fluxcd.io/v2beta1\nkind: HelmRelease\nmetadata: {name: x, namespace: ns}", 1},
		{"apiVersion: source.toolkit.fluxcd.io/v1beta2\nkind: GitRepository\nmetadata: {name: x, namespace: ns}", 1},
		{"apiVersion: notification.toolkit.fluxcd.io/v1beta3\nkind: Alert\nmetadata: {name: x, namespace: ns}", 0},
		{"apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: x, namespace: ns}", 0},
		{"apiVersion: example.fluxcd.io/v1alpha1\nkind: Thing\nmetadata: {name: x, namespace: ns}", 0},
	} {
		root := ksNode(t, "root", nil, "")
		applies(root, object(t, tt.doc), "x.yaml")
		if got := removedAPI(cluster(root), Options{}); len(got) != tt.want {
			t.Errorf("%q: findings = %+v, want %d", tt.doc, got, tt.want)
		}
	}
}

func TestRemoteBaseSeverity(t *testing.T) {
	root := ksNode(t, "root", nil, "")
	root.Err = fmt.Errorf("kustomize build failed: %w", &kustomize.RemoteError{URL: "https://x/y", File: "app/kustomization.yaml", Field: "resources"})
	root.SourceDir = t.TempDir()
	root.Kustomization.Spec.Path = "."
	for _, tt := range []struct {
		opts Options
		want Severity // "" is the rule's own, error
	}{{Options{}, Info}, {Options{NoRemoteBases: true}, ""}} {
		got := remoteBase(cluster(root), tt.opts)
		if len(got) != 1 || got[0].Severity != tt.want || got[0].File != "app/kustomization.yaml" {
			t.Errorf("%+v: findings = %+v, want one %s at app/kustomization.yaml", tt.opts, got, tt.want)
		}
	}
}

func TestIncompleteGraphWarns(t *testing.T) {
	root := ksNode(t, "root", nil, "")
	ext := ksNode(t, "ext", nil, "")
	ext.Built = false // its source exists but is another repository
	app := ksNode(t, "app", []string{"made-by-ext"}, "")
	got := danglingDependency(cluster(root, ext, app), Options{})
	if len(got) != 1 || got[0].Severity != Warning {
		t.Errorf("findings = %+v, want one warning", got)
	}
	ext.Built = true
	got = danglingDependency(cluster(root, ext, app), Options{})
	if len(got) != 1 || got[0].Severity != Error {
		t.Errorf("findings = %+v, want one error", got)
	}
}
