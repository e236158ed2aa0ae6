package reconcile

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Written remembers the resourceVersion each object had when its last run
// ended, the version that run's own writes left. The manager's cache can
// lag behind those writes: a run queued while another was still running
// (a watch event, a dependency's wake) may start from the object as it
// was mid-run, Reconciling and Ready Unknown, take a steady Kustomization
// for one in progress and run it in full, flipping Ready for its
// dependents. When the cached version is not the one the last run left,
// Run reads the object uncached once. The zero value is ready to use.
type Written struct {
	mu sync.Mutex
	rv map[types.NamespacedName]string
}

// fresh returns obj as the API server has it when the cached copy is not
// the version the last run left, else obj unchanged. The uncached read
// costs one request, only after a write by someone else or while the
// cache is behind.
func (w *Written) fresh(ctx context.Context, r client.Reader, key types.NamespacedName, obj client.Object) error {
	if w == nil || r == nil {
		return nil
	}
	w.mu.Lock()
	rv, ok := w.rv[key]
	w.mu.Unlock()
	if !ok || rv == obj.GetResourceVersion() {
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
