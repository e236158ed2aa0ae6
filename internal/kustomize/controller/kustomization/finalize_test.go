package kustomization

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// TestDeletedDuringFirstApplyPrunesEverything deletes a prune:true
// Kustomization of many ConfigMaps as soon as its first apply has written
// some: the finalizer was stored before the apply began and the inventory
// names the whole stage before it is written, so the finalizer prunes
// every ConfigMap, including those written after the delete landed.
func TestDeletedDuringFirstApplyPrunesEverything(t *testing.T) {
	const count = 1500
	f, _ := newFixture(t, map[string]string{"cms/all.yaml": testenv.ConfigMapsYAML("cm", count)})
	k := f.kustomization("many", "./cms", func(s *kustomizev1.KustomizationSpec) {
		s.Timeout.Duration = 5 * time.Minute
	})
	f.env.Create(t, k)
	key := client.ObjectKeyFromObject(k)

	testenv.Eventually(t, 3*testenv.DefaultTimeout, func(context.Context) (bool, string) {
		return f.env.OwnedConfigMaps(t, f.ns, key) > 0, "no ConfigMap applied yet"
	})
	ctx := context.Background()
	if err := f.env.Client.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	atDelete := f.env.OwnedConfigMaps(t, f.ns, key)
	t.Logf("%d of %d ConfigMaps in the cluster when the delete landed", atDelete, count)
	if err := f.env.Client.Get(ctx, key, k); err == nil && !controllerutil.ContainsFinalizer(k, meta.Finalizer) {
		t.Errorf("deleted Kustomization has no finalizer: %v", k.Finalizers)
	}
	testenv.Eventually(t, 3*testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		err := f.env.Client.Get(ctx, key, &kustomizev1.Kustomization{})
		return apierrors.IsNotFound(err), "Kustomization still there"
	})
	if left := f.env.OwnedConfigMaps(t, f.ns, key); left != 0 {
		t.Errorf("%d ConfigMaps left after the finalizer ran, want 0 (%d existed when the delete landed)", left, atDelete)
	}
}
