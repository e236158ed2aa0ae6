package manifests_test

import (
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/install/manifests"
)

// TestSourceControllerRBAC installs the generated crd-controller ClusterRole
// and binding and asks the API server's RBAC authorizer whether the
// source-controller's service account may do what Flux's source-controller
// does with the Helm kinds: every verb on helmrepositories and helmcharts,
// their status and finalizers (Flux's own crd-controller role grants all of
// source.toolkit.fluxcd.io), and read the Secrets their credentials live in.
func TestSourceControllerRBAC(t *testing.T) {
	env, ns, objs := generateIn(t)
	applyRBAC(t, env, find(t, objs, "ClusterRole", "crd-controller-"+ns), find(t, objs, "ClusterRoleBinding", "crd-controller-"+ns))
	allowed := func(group, resource, sub, verb string) bool {
		t.Helper()
		return canI(t, env, ns, manifests.SourceController, group, resource, sub, verb)
	}
	mayEventually := func(group, resource, sub, verb string) bool {
		t.Helper()
		return grantedEventually(t, env, ns, manifests.SourceController, group, resource, sub, verb)
	}
	const group = "source.toolkit.fluxcd.io"
	for _, resource := range []string{"helmrepositories", "helmcharts"} {
		for _, sub := range []string{"", "status", "finalizers"} {
			for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
				if sub != "" && (verb == "list" || verb == "watch" || verb == "create" || verb == "delete") {
					continue
				}
				if !mayEventually(group, resource, sub, verb) {
					t.Errorf("source-controller may not %s %s/%s", verb, resource, sub)
				}
			}
		}
	}
	for _, verb := range []string{"get", "list", "watch"} {
		if !mayEventually("", "secrets", "", verb) {
			t.Errorf("source-controller may not %s secrets", verb)
		}
	}
	if allowed("", "secrets", "", "create") {
		t.Error("source-controller may create secrets; Flux's may not")
	}
}

// TestHelmControllerRBAC: the helm-controller's service account may do what
// Flux's does, through the crd-controller role and the cluster-reconciler
// binding to cluster-admin: its own kinds, Helm's storage Secrets, any
// chart's objects, and impersonating the service accounts HelmReleases name.
func TestHelmControllerRBAC(t *testing.T) {
	env, ns, objs := generateIn(t)
	applyRBAC(t, env, find(t, objs, "ClusterRole", "crd-controller-"+ns), find(t, objs, "ClusterRoleBinding", "crd-controller-"+ns),
		find(t, objs, "ClusterRoleBinding", "cluster-reconciler-"+ns))
	for _, tt := range []struct{ group, resource, sub, verb string }{
		{"helm.toolkit.fluxcd.io", "helmreleases", "status", "patch"},
		{"helm.toolkit.fluxcd.io", "helmreleases", "finalizers", "update"},
		{"source.toolkit.fluxcd.io", "helmcharts", "", "create"},
		{"", "secrets", "", "create"},
		{"apps", "deployments", "", "patch"},
		{"", "serviceaccounts", "", "impersonate"},
	} {
		if !grantedEventually(t, env, ns, manifests.HelmController, tt.group, tt.resource, tt.sub, tt.verb) {
			t.Errorf("helm-controller may not %s %s/%s in group %q", tt.verb, tt.resource, tt.sub, tt.group)
		}
	}
}

// generateIn generates the default installation into a fresh namespace.
func generateIn(t *testing.T) (*testenv.Env, string, []*unstructured.Unstructured) {
	t.Helper()
	env := testenv.Get(t)
	ns := env.Namespace(t)
	o := manifests.DefaultOptions("v1.2.3")
	o.Namespace = ns
	objs, err := manifests.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	return env, ns, objs
}

// applyRBAC applies generated RBAC objects for the test's duration.
func applyRBAC(t *testing.T, env *testenv.Env, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objs {
		//nolint:staticcheck // server-side apply of unstructured objects
		if err := env.Client.Patch(t.Context(), obj.DeepCopy(), client.Apply, client.FieldOwner("flux"), client.ForceOwnership); err != nil {
			t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(t.Context(), obj.DeepCopy()) })
	}
}

// grantedEventually is canI for what must be allowed: the RBAC authorizer
// learns of a new role or binding through its informers a moment after the
// write returns, so a grant is asked for again until it shows or ten seconds
// pass. A denial needs no wait: the lag can only deny what will be allowed.
func grantedEventually(t *testing.T, env *testenv.Env, ns, sa, group, resource, sub, verb string) bool {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if canI(t, env, ns, sa, group, resource, sub, verb) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// canI asks the API server's RBAC authorizer whether the service account
// sa of namespace ns may verb resource/sub of group in namespace apps.
func canI(t *testing.T, env *testenv.Env, ns, sa, group, resource, sub, verb string) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:" + ns + ":" + sa, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: "apps", Group: group, Resource: resource, Subresource: sub, Verb: verb,
		},
	}}
	if err := env.Client.Create(t.Context(), sar); err != nil {
		t.Fatal(err)
	}
	return sar.Status.Allowed
}
