package manifests_test

import (
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/manifests"
	"github.com/weir-gitops/weir/internal/testenv"
)

// TestSourceControllerRBAC installs the generated crd-controller ClusterRole
// and binding and asks the API server's RBAC authorizer whether the
// source-controller's service account may do what Flux's source-controller
// does with the Helm kinds: every verb on helmrepositories and helmcharts,
// their status and finalizers (Flux's own crd-controller role grants all of
// source.toolkit.fluxcd.io), and read the Secrets their credentials live in.
func TestSourceControllerRBAC(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	o := manifests.DefaultOptions("v1.2.3")
	o.Namespace = ns
	objs, err := manifests.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"ClusterRole", "ClusterRoleBinding"} {
		obj := find(t, objs, kind, "crd-controller-"+ns)
		//nolint:staticcheck // server-side apply of unstructured objects
		if err := env.Client.Patch(t.Context(), obj.DeepCopy(), client.Apply, client.FieldOwner("flux"), client.ForceOwnership); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(t.Context(), obj.DeepCopy()) })
	}
	user := "system:serviceaccount:" + ns + ":" + manifests.SourceController
	allowed := func(group, resource, sub, verb string) bool {
		t.Helper()
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "apps", Group: group, Resource: resource, Subresource: sub, Verb: verb,
			},
		}}
		if err := env.Client.Create(t.Context(), sar); err != nil {
			t.Fatal(err)
		}
		return sar.Status.Allowed
	}
	const group = "source.toolkit.fluxcd.io"
	for _, resource := range []string{"helmrepositories", "helmcharts"} {
		for _, sub := range []string{"", "status", "finalizers"} {
			for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
				if sub != "" && (verb == "list" || verb == "watch" || verb == "create" || verb == "delete") {
					continue
				}
				if !allowed(group, resource, sub, verb) {
					t.Errorf("source-controller may not %s %s/%s", verb, resource, sub)
				}
			}
		}
	}
	for _, verb := range []string{"get", "list", "watch"} {
		if !allowed("", "secrets", "", verb) {
			t.Errorf("source-controller may not %s secrets", verb)
		}
	}
	if allowed("", "secrets", "", "create") {
		t.Error("source-controller may create secrets; Flux's may not")
	}
}
