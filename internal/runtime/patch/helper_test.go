package patch

import (
	"context"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

// patchCounter is a fake API server holding obj that counts the patches
// of the object and of its status.
func patchCounter(t *testing.T, obj *kustomizev1.Kustomization) (c client.Client, object, status *int) {
	t.Helper()
	s := runtime.NewScheme()
	if err := kustomizev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	object, status = new(int), new(int)
	c = fake.NewClientBuilder().WithScheme(s).WithObjects(obj).WithStatusSubresource(obj).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
				*object++
				return c.Patch(ctx, o, p, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch,
				opts ...client.SubResourcePatchOption) error {
				*status++
				return c.SubResource(sub).Patch(ctx, o, p, opts...)
			},
		}).Build()
	return c, object, status
}

func TestHelperPatchesOnlyWhatChanged(t *testing.T) {
	tests := []struct {
		name           string
		change         func(*kustomizev1.Kustomization)
		object, status int
	}{
		{"unchanged", func(*kustomizev1.Kustomization) {}, 0, 0},
		// Equal under equality.Semantic, yet it encodes "entries":null
		// where the stored object has "entries":[]: a patch is due.
		{"nil for empty", func(k *kustomizev1.Kustomization) { k.Status.Inventory.Entries = nil }, 0, 1},
		{"status", func(k *kustomizev1.Kustomization) { k.Status.LastAppliedRevision = "main@sha1:2" }, 0, 1},
		{"finalizer", func(k *kustomizev1.Kustomization) { k.Finalizers = []string{"finalizers.fluxcd.io"} }, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stored := &kustomizev1.Kustomization{
				ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "ns"},
				Status: kustomizev1.KustomizationStatus{LastAppliedRevision: "main@sha1:1",
					Inventory: &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{}}},
			}
			c, object, status := patchCounter(t, stored.DeepCopy())
			ctx := context.Background()
			var obj kustomizev1.Kustomization
			if err := c.Get(ctx, client.ObjectKeyFromObject(stored), &obj); err != nil {
				t.Fatal(err)
			}
			h := NewHelper(&obj, c)
			tt.change(&obj)
			if err := h.Patch(ctx, &obj); err != nil {
				t.Fatal(err)
			}
			if *object != tt.object || *status != tt.status {
				t.Errorf("patches of the object, of the status = %d, %d; want %d, %d", *object, *status, tt.object, tt.status)
			}
		})
	}
}

// TestPatchCopyKeepsTheObjectsBase: a copy written from another goroutine
// (a held progress phase) while a spec edit lands leaves a base the
// reconcile's own object diffs cleanly against once it takes the
// resourceVersion PatchCopy returns: its next patch sends its own status
// change alone, no resourceVersion (which would conflict) and no spec
// (which would revert the edit).
func TestPatchCopyKeepsTheObjectsBase(t *testing.T) {
	stored := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "ns"},
		Spec:       kustomizev1.KustomizationSpec{Path: "./apps"},
	}
	c, sent := patchRecorder(t, stored)
	ctx := context.Background()
	var obj kustomizev1.Kustomization
	if err := c.Get(ctx, client.ObjectKeyFromObject(stored), &obj); err != nil {
		t.Fatal(err)
	}
	h := NewHelper(&obj, c)
	obj.Status.LastAttemptedRevision = "main@sha1:1"
	snapshot := obj.DeepCopy()

	edit := obj.DeepCopy()
	edit.Spec.Path = "./edited"
	if err := c.Update(ctx, edit); err != nil {
		t.Fatal(err)
	}
	version, err := h.PatchCopy(ctx, snapshot)
	if err != nil || version == "" || version == obj.ResourceVersion {
		t.Fatalf("PatchCopy = %q, %v; want the new resourceVersion", version, err)
	}
	obj.SetResourceVersion(version)
	obj.Status.LastAppliedRevision = "main@sha1:1"
	if err := h.Patch(ctx, &obj); err != nil {
		t.Fatal(err)
	}
	if want := []string{`{"status":{"lastAttemptedRevision":"main@sha1:1"}}`, `{"status":{"lastAppliedRevision":"main@sha1:1"}}`}; !reflect.DeepEqual(*sent, want) {
		t.Errorf("patches sent %q, want %q", *sent, want)
	}
	var got kustomizev1.Kustomization
	if err := c.Get(ctx, client.ObjectKeyFromObject(stored), &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Path != "./edited" || got.Status.LastAttemptedRevision != "main@sha1:1" || got.Status.LastAppliedRevision != "main@sha1:1" {
		t.Errorf("stored spec.path %q, status %+v; want the edit kept and both writes", got.Spec.Path, got.Status)
	}
}

// patchRecorder is a fake API server holding obj that records every patch
// it is sent, of the object or of its status.
func patchRecorder(t *testing.T, obj *kustomizev1.Kustomization) (client.Client, *[]string) {
	t.Helper()
	s := runtime.NewScheme()
	if err := kustomizev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	sent := &[]string{}
	record := func(p client.Patch, o client.Object) {
		data, err := p.Data(o)
		if err != nil {
			t.Fatal(err)
		}
		*sent = append(*sent, string(data))
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(obj).WithStatusSubresource(obj).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
				record(p, o)
				return c.Patch(ctx, o, p, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch,
				opts ...client.SubResourcePatchOption) error {
				record(p, o)
				return c.SubResource(sub).Patch(ctx, o, p, opts...)
			},
		}).Build()
	return c, sent
}
