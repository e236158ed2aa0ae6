package kustomization

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/artifact"
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

// TestDeleteDuringFirstBuild finalizes one Kustomization while another is
// in its first build, on another goroutine, as two workers do at the
// default --concurrent=4. Run with -race: the finalizer reaches the build
// cache only through the same sync.Once that made it.
func TestDeleteDuringFirstBuild(t *testing.T) {
	finalized := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		<-finalized // the build is under way until the deletion is done
		http.NotFound(w, nil)
	}))
	defer srv.Close()
	r := &Reconciler{Fetcher: &artifact.Fetcher{}}
	building := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "building", Namespace: "ns"}}
	deleted := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{
		Name: "deleted", Namespace: "ns", Finalizers: []string{meta.Finalizer},
	}}

	built := make(chan error, 1)
	go func() {
		a := &meta.Artifact{URL: srv.URL + "/fleet.tar.gz", Digest: "sha256:" + strings.Repeat("0", 64)}
		_, err := r.fetchAndBuild(context.Background(), building, a, &outcome{}, nil)
		built <- err
	}()
	if err := r.finalize(context.Background(), deleted); err != nil {
		t.Fatal(err)
	}
	close(finalized)
	if _, ok := errs.AsWaiting(<-built); !ok {
		t.Error("the build of a missing artifact does not wait for the source")
	}
	if len(deleted.Finalizers) != 0 {
		t.Errorf("finalizers %v left", deleted.Finalizers)
	}
}
