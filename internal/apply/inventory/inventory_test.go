package inventory

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/object"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/apply/ssa"
)

func obj(ns, name, group, kind string) ssa.ObjMetadata {
	return ssa.ObjMetadata{Namespace: ns, Name: name, GroupKind: schema.GroupKind{Group: group, Kind: kind}}
}

func TestIDAndParse(t *testing.T) {
	for _, tc := range []struct {
		obj ssa.ObjMetadata
		id  string
	}{
		{obj("default", "podinfo", "apps", "Deployment"), "default_podinfo_apps_Deployment"},
		{obj("default", "podinfo", "", "Service"), "default_podinfo__Service"},
		{obj("", "apps", "", "Namespace"), "_apps__Namespace"},
		{obj("", "widgets.example.com", "apiextensions.k8s.io", "CustomResourceDefinition"),
			"_widgets.example.com_apiextensions.k8s.io_CustomResourceDefinition"},
		{obj("", "system:controller:job-controller", "rbac.authorization.k8s.io", "ClusterRole"),
			"_system__controller__job-controller_rbac.authorization.k8s.io_ClusterRole"},
		{obj("kube-system", "system::leader-locking", "rbac.authorization.k8s.io", "RoleBinding"),
			"kube-system_system____leader-locking_rbac.authorization.k8s.io_RoleBinding"},
		// Underscores in RBAC names: cli-utils (and so Flux) cannot read these back.
		{obj("", "my_role", "rbac.authorization.k8s.io", "ClusterRole"),
			"_my_role_rbac.authorization.k8s.io_ClusterRole"},
		{obj("team-a", "ci:deploy_bot", "rbac.authorization.k8s.io", "Role"),
			"team-a_ci__deploy_bot_rbac.authorization.k8s.io_Role"},
		{obj("", "::leading", "rbac.authorization.k8s.io", "ClusterRoleBinding"),
			"_____leading_rbac.authorization.k8s.io_ClusterRoleBinding"},
		// Only RBAC kinds escape colons.
		{obj("default", "a:b", "example.com", "Widget"), "default_a:b_example.com_Widget"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			if got := ID(tc.obj); got != tc.id {
				t.Errorf("ID(%v) = %q, want %q", tc.obj, got, tc.id)
			}
			got, err := Parse(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.obj, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.id, diff)
			}
		})
	}
}

// TestParseAgreesWithCLIUtils checks that for every id cli-utils (the
// parser Flux uses) accepts, Parse reads the same object, and that ID
// writes what cli-utils writes.
func TestParseAgreesWithCLIUtils(t *testing.T) {
	for _, id := range []string{
		"default_podinfo_apps_Deployment",
		"default_podinfo__Service",
		"_apps__Namespace",
		"_system__controller__job-controller_rbac.authorization.k8s.io_ClusterRole",
		"kube-system_system____leader-locking_rbac.authorization.k8s.io_RoleBinding",
		"flux-system_flux-system_kustomize.toolkit.fluxcd.io_Kustomization",
	} {
		want, err := object.ParseObjMetadata(id)
		if err != nil {
			t.Fatalf("cli-utils: %v", err)
		}
		got, err := Parse(id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Namespace != want.Namespace || got.Name != want.Name || got.GroupKind != want.GroupKind {
			t.Errorf("Parse(%q) = %+v, cli-utils reads %+v", id, got, want)
		}
		if ID(got) != want.String() {
			t.Errorf("ID(%+v) = %q, cli-utils writes %q", got, ID(got), want.String())
		}
	}
	// What Flux cannot read and weir can.
	if _, err := object.ParseObjMetadata("_my_role_rbac.authorization.k8s.io_ClusterRole"); err == nil {
		t.Error("cli-utils now reads names with underscores: revisit the package documentation")
	}
}

// TestAmbiguousNames pins down how the names the id format cannot tell
// apart are read back: like Flux writes them, as colons.
func TestAmbiguousNames(t *testing.T) {
	for name, want := range map[string]string{
		"a__b": "a:b",
		"a_:b": "a:_b",
	} {
		o := obj("", name, "rbac.authorization.k8s.io", "ClusterRole")
		got, err := Parse(ID(o))
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != want {
			t.Errorf("name %q reads back as %q, want %q", name, got.Name, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, id := range []string{
		"",
		"podinfo",
		"default_podinfo",
		"default_podinfo_apps",
		"default__apps_Deployment",
		"default_podinfo_apps_",
	} {
		if got, err := Parse(id); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", id, got)
		}
	}
}

func TestNew(t *testing.T) {
	cs := &ssa.ChangeSet{Entries: []ssa.ChangeSetEntry{
		{ObjMetadata: obj("", "widgets.example.com", "apiextensions.k8s.io", "CustomResourceDefinition"), Version: "v1", Action: ssa.Created},
		{ObjMetadata: obj("", "apps", "", "Namespace"), Version: "v1", Action: ssa.Unchanged},
		{ObjMetadata: obj("apps", "ignored", "", "ConfigMap"), Version: "v1", Action: ssa.Skipped},
		{ObjMetadata: obj("apps", "podinfo", "", "Service"), Version: "v1", Action: ssa.Configured},
		{ObjMetadata: obj("apps", "podinfo", "apps", "Deployment"), Version: "v1", Action: ssa.Created},
		{ObjMetadata: obj("apps", "w", "example.com", "Widget"), Version: "v1beta2", Action: ssa.Created},
	}}
	want := kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{
		{ID: "_widgets.example.com_apiextensions.k8s.io_CustomResourceDefinition", Version: "v1"},
		{ID: "_apps__Namespace", Version: "v1"},
		{ID: "apps_podinfo__Service", Version: "v1"},
		{ID: "apps_podinfo_apps_Deployment", Version: "v1"},
		{ID: "apps_w_example.com_Widget", Version: "v1beta2"},
	}}
	if diff := cmp.Diff(want, New(cs)); diff != "" {
		t.Errorf("New (-want +got):\n%s", diff)
	}
	if got := New(nil); got.Entries == nil || len(got.Entries) != 0 {
		t.Errorf("New(nil) = %#v, want empty non-nil entries (the field is required)", got)
	}
}

func TestDiff(t *testing.T) {
	inv := func(ids ...string) kustomizev1.ResourceInventory {
		out := kustomizev1.ResourceInventory{}
		for _, id := range ids {
			out.Entries = append(out.Entries, kustomizev1.ResourceRef{ID: id, Version: "v1"})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		old, cur kustomizev1.ResourceInventory
		keep     []ssa.ObjMetadata
		want     []ssa.ObjMetadata
	}{
		{name: "nothing left", old: inv("default_a__ConfigMap"), cur: inv("default_a__ConfigMap")},
		{name: "empty old", cur: inv("default_a__ConfigMap")},
		{
			name: "in apply order",
			old: inv("_apps__Namespace", "apps_web_apps_Deployment", "apps_web__Service",
				"_w.example.com_apiextensions.k8s.io_CustomResourceDefinition", "apps_x_example.com_Widget",
				"_fast_storage.k8s.io_StorageClass", "_view_rbac.authorization.k8s.io_ClusterRole",
				"_view_rbac.authorization.k8s.io_ClusterRoleBinding"),
			cur: inv(),
			want: []ssa.ObjMetadata{
				obj("", "w.example.com", "apiextensions.k8s.io", "CustomResourceDefinition"),
				obj("", "apps", "", "Namespace"),
				obj("", "view", "rbac.authorization.k8s.io", "ClusterRole"),
				obj("", "fast", "storage.k8s.io", "StorageClass"),
				obj("", "view", "rbac.authorization.k8s.io", "ClusterRoleBinding"),
				obj("apps", "web", "", "Service"),
				obj("apps", "web", "apps", "Deployment"),
				obj("apps", "x", "example.com", "Widget"),
			},
		},
		{
			name: "version changes are the same object",
			old:  kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: "default_hpa_autoscaling_HorizontalPodAutoscaler", Version: "v2beta2"}}},
			cur:  kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: "default_hpa_autoscaling_HorizontalPodAutoscaler", Version: "v2"}}},
		},
		{
			name: "skipped objects are kept",
			old:  inv("default_a__ConfigMap", "default_b__ConfigMap"),
			cur:  inv(),
			keep: []ssa.ObjMetadata{obj("default", "a", "", "ConfigMap")},
			want: []ssa.ObjMetadata{obj("default", "b", "", "ConfigMap")},
		},
		{
			name: "duplicates reported once",
			old:  inv("default_a__ConfigMap", "default_a__ConfigMap"),
			cur:  inv(),
			want: []ssa.ObjMetadata{obj("default", "a", "", "ConfigMap")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Diff(tc.old, tc.cur, tc.keep...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := Diff(inv("garbage"), inv()); err == nil {
		t.Error("Diff of an unreadable inventory: want an error")
	}
}

func TestMerge(t *testing.T) {
	old := kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{
		{ID: "apps_a__ConfigMap", Version: "v1"},
		{ID: "apps_podinfo_apps_Deployment", Version: "v1"},
	}}
	got, grew := Merge(old, []ssa.ChangeSetEntry{
		{ObjMetadata: obj("apps", "podinfo", "apps", "Deployment"), Version: "v1beta2", Action: ssa.Configured},
		{ObjMetadata: obj("apps", "b", "", "ConfigMap"), Version: "v1", Action: ssa.Created},
		{ObjMetadata: obj("apps", "b", "", "ConfigMap"), Version: "v1", Action: ssa.Created},
	})
	want := kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{
		{ID: "apps_a__ConfigMap", Version: "v1"},
		{ID: "apps_podinfo_apps_Deployment", Version: "v1"},
		{ID: "apps_b__ConfigMap", Version: "v1"},
	}}
	if diff := cmp.Diff(want, got); diff != "" || !grew {
		t.Errorf("Merge grew=%v (-want +got):\n%s", grew, diff)
	}
	if len(old.Entries) != 2 {
		t.Errorf("Merge changed its input: %+v", old)
	}
	if _, grew := Merge(got, []ssa.ChangeSetEntry{{ObjMetadata: obj("apps", "a", "", "ConfigMap"), Version: "v1"}}); grew {
		t.Error("Merge of a known object reports growth")
	}
}
