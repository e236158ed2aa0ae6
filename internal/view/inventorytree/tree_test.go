package inventorytree

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/object"
)

func node(ns, name, group, kind string, children ...*Node) *Node {
	return &Node{Resource: object.ObjMetadata{Namespace: ns, Name: name, GroupKind: schema.GroupKind{Group: group, Kind: kind}}, Resources: children}
}

func TestString(t *testing.T) {
	tree := node("flux-system", "root", "kustomize.toolkit.fluxcd.io", "Kustomization",
		node("", "apps", "", "Namespace"),
		node("flux-system", "infra", "kustomize.toolkit.fluxcd.io", "Kustomization",
			node("infra", "a", "apps", "Deployment"),
			node("infra", "b", "", "Service")),
		node("flux-system", "root", "source.toolkit.fluxcd.io", "GitRepository"))
	want := `Kustomization/flux-system/root
├── Namespace/apps
├── Kustomization/flux-system/infra
│   ├── Deployment/infra/a
│   └── Service/infra/b
└── GitRepository/flux-system/root
`
	if got := tree.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	last := node("ns", "x", "kustomize.toolkit.fluxcd.io", "Kustomization",
		node("ns", "y", "kustomize.toolkit.fluxcd.io", "Kustomization", node("ns", "z", "", "ConfigMap")))
	if got, want := last.String(), "Kustomization/ns/x\n└── Kustomization/ns/y\n    └── ConfigMap/ns/z\n"; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
