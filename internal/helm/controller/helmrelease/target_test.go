package helmrelease

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestTargetChangeMovesTheRelease: a new release name uninstalls the old
// release (objects and storage) and installs the new one; a new storage
// namespace moves the storage Secrets the same way. Nothing of the old
// release is left behind.
func TestTargetChangeMovesTheRelease(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	hr := f.helmRelease("web", nil)
	f.env.Create(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/web.v1 with chart app@1.0.0", f.ns))

	f.env.Update(t, hr, func() { hr.Spec.ReleaseName = "frontend" })
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/frontend.v1 with chart app@1.0.0", f.ns))
	f.waitGone(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "web-app"}})
	if got := f.storageSecrets("web"); len(got) != 0 {
		t.Errorf("old release's storage left: %v", got)
	}
	if got := f.storageSecrets("frontend"); !slices.Equal(got, []string{"sh.helm.release.v1.frontend.v1"}) {
		t.Errorf("new release's storage = %v", got)
	}
	if len(hr.Status.History) != 1 || hr.Status.History[0].Name != "frontend" {
		t.Errorf("history = %v", historyOf(hr))
	}
	f.configMap("frontend-app")

	storage := f.env.Namespace(t)
	f.env.Update(t, hr, func() { hr.Spec.StorageNamespace = storage })
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/frontend.v1 with chart app@1.0.0", f.ns))
	var moved corev1.SecretList
	if err := f.env.Client.List(context.Background(), &moved, client.InNamespace(storage), client.MatchingLabels{"owner": "helm", "name": "frontend"}); err != nil {
		t.Fatal(err)
	}
	if len(moved.Items) != 1 || hr.Status.StorageNamespace != storage {
		t.Errorf("storage in %s: %d Secrets, status.storageNamespace %q", storage, len(moved.Items), hr.Status.StorageNamespace)
	}
	if got := f.storageSecrets("frontend"); len(got) != 0 {
		t.Errorf("storage left in the old namespace: %v", got)
	}
}
