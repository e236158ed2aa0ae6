package objectview

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// as is a client impersonating user, as the UI's in-cluster mode builds
// it, and its rest.Config.
func as(t *testing.T, user string) (client.Client, *rest.Config) {
	t.Helper()
	env := testenv.Get(t)
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, cfg
}

// grant gives user the verbs on the resources of group in ns.
func grant(t *testing.T, ns, user, group string, resources, verbs []string) {
	t.Helper()
	env := testenv.Get(t)
	name := user + "-" + resources[0]
	env.Create(t,
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{group}, Resources: resources, Verbs: verbs}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		})
}

// TestPermissions: alice may patch the Kustomization and its
// GitRepository; bob may read the Kustomization only; carol may patch
// the Kustomization but not its source.
func TestPermissions(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyYAML(t, ns, fleet)
	const ks = "kustomize.toolkit.fluxcd.io"
	grant(t, ns, "alice", ks, []string{"kustomizations"}, []string{"get", "patch"})
	grant(t, ns, "alice", "source.toolkit.fluxcd.io", []string{"gitrepositories"}, []string{"patch"})
	grant(t, ns, "bob", ks, []string{"kustomizations"}, []string{"get", "list"})
	grant(t, ns, "carol", ks, []string{"kustomizations"}, []string{"get", "patch"})
	yes := Perm{Allowed: true}
	bobNo := Perm{Reason: "bob cannot patch kustomizations.kustomize.toolkit.fluxcd.io in namespace " + ns}
	tests := []struct {
		user string
		want Perms
	}{
		{"alice", Perms{Reconcile: yes, Suspend: yes, Resume: yes, ReconcileSource: yes}},
		{"bob", Perms{Reconcile: bobNo, Suspend: bobNo, Resume: bobNo, ReconcileSource: bobNo}},
		{"carol", Perms{Reconcile: yes, Suspend: yes, Resume: yes, ReconcileSource: Perm{
			Reason: "carol cannot patch gitrepositories.source.toolkit.fluxcd.io in namespace " + ns,
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			c, _ := as(t, tt.user)
			got, err := Permissions(context.Background(), c, Ref{Kind: "Kustomization", Namespace: ns, Name: "ready"}, tt.user)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("Permissions (-want +got):\n%s", diff)
			}
		})
	}
	c, _ := as(t, "dave")
	if _, err := Permissions(context.Background(), c, Ref{Kind: "Kustomization", Namespace: ns, Name: "ready"}, "dave"); err == nil {
		t.Error("dave, who may not read the Kustomization: no error")
	}
}

// TestPermissionsSources: reconcile-source on a HelmRelease from
// spec.chart needs the HelmRepository and the HelmChart the controller
// made (<namespace>-<name>), the list the action patches; an object with no
// source says so.
func TestPermissionsSources(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyYAML(t, ns, `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: NS}
spec: {url: "http://127.0.0.1:1", interval: 1m}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: NS}
spec:
  interval: 10m
  chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: charts}}}
`)
	const src = "source.toolkit.fluxcd.io"
	grant(t, ns, "erin", "helm.toolkit.fluxcd.io", []string{"helmreleases"}, []string{"get", "patch"})
	grant(t, ns, "erin", src, []string{"helmrepositories"}, []string{"get", "patch"})
	grant(t, ns, "frank", "helm.toolkit.fluxcd.io", []string{"helmreleases"}, []string{"get", "patch"})
	grant(t, ns, "frank", src, []string{"helmrepositories", "helmcharts"}, []string{"get", "patch"})
	tests := []struct {
		user string
		ref  Ref
		want Perm
	}{
		{"erin", Ref{Kind: "HelmRelease", Namespace: ns, Name: "web"},
			Perm{Reason: "erin cannot patch helmcharts.source.toolkit.fluxcd.io in namespace " + ns}},
		{"frank", Ref{Kind: "HelmRelease", Namespace: ns, Name: "web"}, Perm{Allowed: true}},
		{"frank", Ref{Kind: "HelmRepository", Namespace: ns, Name: "charts"},
			Perm{Reason: "HelmRepository charts has no source to reconcile"}},
	}
	for _, tt := range tests {
		t.Run(tt.user+"/"+tt.ref.Kind, func(t *testing.T) {
			c, _ := as(t, tt.user)
			got, err := Permissions(context.Background(), c, tt.ref, tt.user)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.ReconcileSource); diff != "" {
				t.Errorf("ReconcileSource (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPermissionsExternalArtifact: whoever may patch an ExternalArtifact
// is still offered no action on it, and told why; its ArtifactGenerator
// is suspended and reconciled like any other kind.
func TestPermissionsExternalArtifact(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyYAML(t, ns, `apiVersion: source.toolkit.fluxcd.io/v1
kind: ExternalArtifact
metadata:
  name: apps
  namespace: NS
spec:
  sourceRef:
    apiVersion: source.extensions.fluxcd.io/v1beta1
    kind: ArtifactGenerator
    name: flux-system
---
apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata:
  name: flux-system
  namespace: NS
spec:
  sources:
  - alias: repo
    kind: GitRepository
    name: flux-system
  artifacts:
  - name: apps
    copy:
    - from: "@repo/apps/**"
      to: "@artifact/"
`)
	grant(t, ns, "erin", "source.toolkit.fluxcd.io", []string{"externalartifacts"}, []string{"get", "patch"})
	grant(t, ns, "erin", "source.extensions.fluxcd.io", []string{"artifactgenerators"}, []string{"get", "patch"})
	c, _ := as(t, "erin")
	got, err := Permissions(context.Background(), c, Ref{Kind: "ExternalArtifact", Namespace: ns, Name: "apps"}, "erin")
	if err != nil {
		t.Fatal(err)
	}
	no := Perm{Reason: "ExternalArtifact apps is written by its producer (spec.sourceRef), which is the one to reconcile or suspend"}
	if diff := cmp.Diff(Perms{Reconcile: no, Suspend: no, Resume: no, ReconcileSource: no}, *got); diff != "" {
		t.Errorf("ExternalArtifact permissions (-want +got):\n%s", diff)
	}
	got, err = Permissions(context.Background(), c, Ref{Kind: "ArtifactGenerator", Namespace: ns, Name: "flux-system"}, "erin")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Reconcile.Allowed || !got.Suspend.Allowed || !got.Resume.Allowed {
		t.Errorf("ArtifactGenerator permissions: %+v", *got)
	}
}
