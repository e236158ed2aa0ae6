package secretcache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Cache is a client.Reader whose Secret reads are served from memory
// while the Secret's resourceVersion is the watch's; every other read
// goes to the API reader it wraps.
type Cache struct {
	api      client.Reader
	informer toolscache.SharedIndexInformer

	mu   sync.Mutex
	data map[types.NamespacedName]*corev1.Secret
	// reads counts the Secret reads that went to the API server.
	reads atomic.Int64
}

// New returns a Cache reading through api, watching the Secrets of
// namespace (every namespace when empty) with cfg. Start runs the watch.
func New(cfg *rest.Config, api client.Reader, namespace string) (*Cache, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the metadata client: %w", err)
	}
	factory := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, namespace, nil)
	inf := factory.ForResource(corev1.SchemeGroupVersion.WithResource("secrets")).Informer()
	c := &Cache{api: api, informer: inf, data: map[types.NamespacedName]*corev1.Secret{}}
	if err := inf.SetTransform(stripMetadata); err != nil {
		return nil, fmt.Errorf("configuring the Secret watch: %w", err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { c.forget(obj) },
		DeleteFunc: c.forget,
	})
	if err != nil {
		return nil, fmt.Errorf("configuring the Secret watch: %w", err)
	}
	return c, nil
}

// stripMetadata keeps of a Secret's metadata what the cache compares:
// its name and resourceVersion.
func stripMetadata(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Namespace: m.Namespace, Name: m.Name, ResourceVersion: m.ResourceVersion, UID: m.UID}}, nil
}

// forget drops the data of a Secret that changed or went away.
func (c *Cache) forget(obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.data, types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()})
}

// Start runs the watch until ctx ends: a manager.Runnable.
func (c *Cache) Start(ctx context.Context) error {
	c.informer.Run(ctx.Done())
	return nil
}

// WaitForSync waits until the watch has listed every Secret, or ctx
// ends; it reports whether it synced.
func (c *Cache) WaitForSync(ctx context.Context) bool {
	return toolscache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced)
}

// NeedLeaderElection is false: every replica serves events.
func (c *Cache) NeedLeaderElection() bool { return false }

// Version is the resourceVersion the watch holds for key, once it has
// synced and seen the Secret.
func (c *Cache) Version(key types.NamespacedName) (string, bool) {
	if !c.informer.HasSynced() {
		return "", false
	}
	item, ok, err := c.informer.GetStore().GetByKey(key.Namespace + "/" + key.Name)
	if err != nil || !ok {
		return "", false
	}
	m, ok := item.(metav1.Object)
	if !ok {
		return "", false
	}
	return m.GetResourceVersion(), true
}

// APIReads is the number of Secret reads that went to the API server.
func (c *Cache) APIReads() int64 { return c.reads.Load() }

// Get reads a Secret from memory when its data is of the version the
// watch holds, else from the API server (remembering it); other kinds
// from the API server.
func (c *Cache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	sec, ok := obj.(*corev1.Secret)
	if !ok || len(opts) > 0 {
		return c.api.Get(ctx, key, obj, opts...)
	}
	version, known := c.Version(key)
	if known {
		c.mu.Lock()
		hit := c.data[key]
		c.mu.Unlock()
		if hit != nil && hit.ResourceVersion == version {
			hit.DeepCopyInto(sec)
			return nil
		}
	}
	c.reads.Add(1)
	if err := c.api.Get(ctx, key, sec); err != nil {
		return err
	}
	if known {
		c.mu.Lock()
		c.data[key] = sec.DeepCopy()
		c.mu.Unlock()
	}
	return nil
}

// List goes to the API server: the event server lists no Secrets.
func (c *Cache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.api.List(ctx, list, opts...)
}
