package ssa

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func id(group, kind, ns, name string) ObjMetadata {
	return ObjMetadata{Namespace: ns, Name: name, GroupKind: schema.GroupKind{Group: group, Kind: kind}}
}

func TestStageOf(t *testing.T) {
	custom := map[schema.GroupKind]bool{
		{Group: "rbac.authorization.k8s.io", Kind: "Role"}: true,
		{Group: "example.com", Kind: "FancyClass"}:         true,
	}
	for _, tc := range []struct {
		gk   schema.GroupKind
		want stage
	}{
		{schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}, stageDefinitions},
		{schema.GroupKind{Kind: "Namespace"}, stageDefinitions},
		{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, stageDefinitions},
		// ClusterRoleBindings are not definitions in Flux.
		{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}, stageRest},
		// Same kind names in other groups are ordinary objects.
		{schema.GroupKind{Group: "example.com", Kind: "Namespace"}, stageRest},
		{schema.GroupKind{Group: "example.com", Kind: "ClusterRole"}, stageRest},
		{schema.GroupKind{Group: "storage.k8s.io", Kind: "StorageClass"}, stageClasses},
		{schema.GroupKind{Group: "gateway.networking.k8s.io", Kind: "GatewayClass"}, stageClasses},
		{schema.GroupKind{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass"}, stageClasses},
		// The class rule wins over the custom stage, and is case-sensitive.
		{schema.GroupKind{Group: "example.com", Kind: "FancyClass"}, stageClasses},
		{schema.GroupKind{Group: "example.com", Kind: "Subclass"}, stageRest},
		{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}, stageCustom},
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, stageRest},
	} {
		if got := stageOf(tc.gk, custom); got != tc.want {
			t.Errorf("stageOf(%v) = %d, want %d", tc.gk, got, tc.want)
		}
	}
}

func TestSortInApplyOrder(t *testing.T) {
	in := []ObjMetadata{
		id("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "", "hook"),
		id("example.com", "Widget", "apps", "w"),
		id("apps", "Deployment", "apps", "web"),
		id("", "Service", "apps", "web"),
		id("", "ConfigMap", "apps", "b"),
		id("", "ConfigMap", "apps", "a"),
		id("", "ConfigMap", "admin", "z"),
		id("", "Secret", "apps", "creds"),
		id("batch", "Job", "apps", "migrate"),
		id("rbac.authorization.k8s.io", "ClusterRoleBinding", "", "view"),
		id("rbac.authorization.k8s.io", "RoleBinding", "apps", "view"),
		id("rbac.authorization.k8s.io", "Role", "apps", "view"),
		id("", "ServiceAccount", "apps", "web"),
		id("storage.k8s.io", "StorageClass", "", "fast"),
		id("networking.k8s.io", "IngressClass", "", "nginx"),
		id("rbac.authorization.k8s.io", "ClusterRole", "", "view"),
		id("", "Namespace", "", "apps"),
		id("apiextensions.k8s.io", "CustomResourceDefinition", "", "widgets.example.com"),
		id("autoscaling", "HorizontalPodAutoscaler", "apps", "web"),
	}
	want := []ObjMetadata{
		// Definitions.
		id("apiextensions.k8s.io", "CustomResourceDefinition", "", "widgets.example.com"),
		id("", "Namespace", "", "apps"),
		id("rbac.authorization.k8s.io", "ClusterRole", "", "view"),
		// Classes, in Flux's kind order.
		id("storage.k8s.io", "StorageClass", "", "fast"),
		id("networking.k8s.io", "IngressClass", "", "nginx"),
		// The rest: listed kinds first, unlisted by group then kind, webhooks last.
		id("", "ServiceAccount", "apps", "web"),
		id("rbac.authorization.k8s.io", "Role", "apps", "view"),
		id("rbac.authorization.k8s.io", "RoleBinding", "apps", "view"),
		id("rbac.authorization.k8s.io", "ClusterRoleBinding", "", "view"),
		id("", "ConfigMap", "admin", "z"),
		id("", "ConfigMap", "apps", "a"),
		id("", "ConfigMap", "apps", "b"),
		id("", "Secret", "apps", "creds"),
		id("", "Service", "apps", "web"),
		id("apps", "Deployment", "apps", "web"),
		id("autoscaling", "HorizontalPodAutoscaler", "apps", "web"),
		id("batch", "Job", "apps", "migrate"),
		id("example.com", "Widget", "apps", "w"),
		id("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "", "hook"),
	}
	SortInApplyOrder(in)
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("apply order (-want +got):\n%s", diff)
	}
}

func TestObjMetadataString(t *testing.T) {
	if got := id("apps", "Deployment", "default", "podinfo").String(); got != "Deployment/default/podinfo" {
		t.Errorf("namespaced: %q", got)
	}
	if got := id("", "Namespace", "", "apps").String(); got != "Namespace/apps" {
		t.Errorf("cluster-scoped: %q", got)
	}
}

func TestChangeSet(t *testing.T) {
	cs := &ChangeSet{Entries: []ChangeSetEntry{
		{ObjMetadata: id("", "Namespace", "", "apps"), Version: "v1", Action: Unchanged},
		{ObjMetadata: id("", "ConfigMap", "apps", "a"), Version: "v1", Action: Created},
		{ObjMetadata: id("", "ConfigMap", "apps", "b"), Version: "v1", Action: Skipped},
		{ObjMetadata: id("apps", "Deployment", "apps", "web"), Version: "v1", Action: Configured},
	}}
	wantString := "Namespace/apps unchanged\nConfigMap/apps/a created\nConfigMap/apps/b skipped\nDeployment/apps/web configured"
	if got := cs.String(); got != wantString {
		t.Errorf("String() = %q", got)
	}
	if got := cs.Changes(); got != "ConfigMap/apps/a created\nDeployment/apps/web configured" {
		t.Errorf("Changes() = %q", got)
	}
	if diff := cmp.Diff([]ObjMetadata{id("", "Namespace", "", "apps"), id("", "ConfigMap", "apps", "a"), id("apps", "Deployment", "apps", "web")}, cs.Objects()); diff != "" {
		t.Errorf("Objects() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ObjMetadata{id("", "ConfigMap", "apps", "b")}, cs.Skipped()); diff != "" {
		t.Errorf("Skipped() (-want +got):\n%s", diff)
	}
	var empty *ChangeSet
	if empty.String() != "" || empty.Changes() != "" || empty.Objects() != nil {
		t.Error("nil ChangeSet is not empty")
	}
}
