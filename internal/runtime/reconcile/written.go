package reconcile

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Written remembers the resourceVersion each object had when its last run
// ended, the version that run's own writes left. The manager's cache can
// lag behind those writes: a run queued while another was still running
// (a watch event, a dependency's wake) may start from the object as it
// was mid-run, Reconciling and Ready Unknown, take a steady Kustomization
// for one in progress and run it in full, flipping Ready for its
// dependents. When the cached version is older than the one the last run
// left, Run reads the object uncached once. The zero value is ready to use.
type Written struct {
	mu sync.Mutex
	rv map[types.NamespacedName]string
}

// fresh reads obj again, uncached, when the cached copy is older than the
// version the last run left. Resource versions of one resource compare
// (apimachinery's CompareResourceVersion); a newer copy, written by
// someone else since, came through the same watch after the run's own
// writes and holds them, so it needs no second read. A version that does
// not compare (not an etcd revision) is read again, to be safe.
func (w *Written) fresh(ctx context.Context, r client.Reader, key types.NamespacedName, obj client.Object) error {
	if w == nil || r == nil {
		return nil
	}
	w.mu.Lock()
	left, ok := w.rv[key]
	w.mu.Unlock()
	if !ok {
		return nil
	}
	if cmp, err := resourceversion.CompareResourceVersion(obj.GetResourceVersion(), left); err == nil && cmp >= 0 {
		return nil
	}
	return r.Get(ctx, key, obj)
}

// left records the version a run left obj at.
func (w *Written) left(key types.NamespacedName, obj client.Object) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rv == nil {
		w.rv = map[types.NamespacedName]string{}
	}
	w.rv[key] = obj.GetResourceVersion()
}

// forget drops an object that is gone.
func (w *Written) forget(key types.NamespacedName) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.rv, key)
}
