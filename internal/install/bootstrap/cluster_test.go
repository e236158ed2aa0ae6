package bootstrap

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/scheme"
)

// object is an unstructured object of the given identity.
func object(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func TestSplitSync(t *testing.T) {
	const ns = "flux-system"
	tests := []struct {
		name     string
		obj      *unstructured.Unstructured
		wantSync bool
	}{
		{name: "flux-system GitRepository", obj: object("source.toolkit.fluxcd.io/v1", "GitRepository", ns, SyncName), wantSync: true},
		{name: "flux-system Kustomization", obj: object("kustomize.toolkit.fluxcd.io/v1", "Kustomization", ns, SyncName), wantSync: true},
		{name: "flux-system GitRepository of an older version", obj: object("source.toolkit.fluxcd.io/v1beta2", "GitRepository", ns, SyncName), wantSync: true},
		{name: "GitRepository named otherwise", obj: object("source.toolkit.fluxcd.io/v1", "GitRepository", ns, "apps")},
		{name: "Kustomization named otherwise", obj: object("kustomize.toolkit.fluxcd.io/v1", "Kustomization", ns, "apps")},
		{name: "kustomize.config.k8s.io Kustomization", obj: object("kustomize.config.k8s.io/v1beta1", "Kustomization", ns, SyncName)},
		{name: "GitRepository of another group", obj: object("example.com/v1", "GitRepository", ns, SyncName)},
		{name: "Namespace flux-system", obj: object("v1", "Namespace", "", SyncName)},
		{name: "Deployment", obj: object("apps/v1", "Deployment", ns, "source-controller")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			components, sync := splitSync([]*unstructured.Unstructured{tt.obj})
			want := []*unstructured.Unstructured{tt.obj}
			wantComponents, wantSync := want, []*unstructured.Unstructured(nil)
			if tt.wantSync {
				wantComponents, wantSync = nil, want
			}
			if diff := cmp.Diff(wantComponents, components); diff != "" {
				t.Errorf("components (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantSync, sync); diff != "" {
				t.Errorf("sync (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSplitSyncKeepsOrder(t *testing.T) {
	ns := object("v1", "Namespace", "", "flux-system")
	repo := object("source.toolkit.fluxcd.io/v1", "GitRepository", "flux-system", SyncName)
	dep := object("apps/v1", "Deployment", "flux-system", "source-controller")
	ks := object("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", SyncName)
	components, sync := splitSync([]*unstructured.Unstructured{ns, repo, dep, ks})
	if diff := cmp.Diff([]*unstructured.Unstructured{ns, dep}, components); diff != "" {
		t.Errorf("components (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]*unstructured.Unstructured{repo, ks}, sync); diff != "" {
		t.Errorf("sync (-want +got):\n%s", diff)
	}
}

func TestMustInstall(t *testing.T) {
	const ns = "flux-system"
	kustomization := func(name, lastApplied string) *kustomizev1.Kustomization {
		return &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Status:     kustomizev1.KustomizationStatus{LastAppliedRevision: lastApplied},
		}
	}
	tests := []struct {
		name    string
		objs    []client.Object
		getErr  error
		want    bool
		wantErr string
	}{
		{name: "no Kustomization", want: true},
		{name: "another Kustomization only", objs: []client.Object{kustomization("apps", "main@sha1:abc")}, want: true},
		{name: "never applied", objs: []client.Object{kustomization(SyncName, "")}, want: true},
		{name: "applied", objs: []client.Object{kustomization(SyncName, "main@sha1:abc")}, want: false},
		{
			name:    "read error",
			getErr:  errors.New("connection refused"),
			wantErr: "reading Kustomization flux-system/flux-system: connection refused",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme.Must()).WithObjects(tt.objs...).
				WithStatusSubresource(&kustomizev1.Kustomization{})
			if tt.getErr != nil {
				b = b.WithInterceptorFuncs(interceptor.Funcs{
					Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
						return tt.getErr
					},
				})
			}
			got, err := mustInstall(context.Background(), b.Build(), ns)
			wantErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("mustInstall() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestConditionText(t *testing.T) {
	ready := &metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "GitOperationFailed", Message: "auth failed"}
	tests := []struct {
		name        string
		ready       *metav1.Condition
		hasArtifact bool
		revision    string
		want        string
	}{
		{name: "nothing yet", want: "no Ready condition yet"},
		{
			name: "revision without Ready", hasArtifact: true, revision: "main@sha1:abc",
			want: "no Ready condition yet (artifact revision main@sha1:abc)",
		},
		{name: "Ready without artifact", ready: ready, want: "Ready=False GitOperationFailed: auth failed"},
		{
			name: "Ready with artifact", ready: ready, hasArtifact: true, revision: "main@sha1:abc",
			want: "Ready=False GitOperationFailed: auth failed (artifact revision main@sha1:abc)",
		},
		{name: "artifact with empty revision", ready: ready, hasArtifact: true, want: "Ready=False GitOperationFailed: auth failed"},
		{name: "revision but no artifact", ready: ready, revision: "main@sha1:abc", want: "Ready=False GitOperationFailed: auth failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := conditionText(tt.ready, tt.hasArtifact, "artifact revision", tt.revision); got != tt.want {
				t.Errorf("conditionText() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHandled(t *testing.T) {
	const token = "2026-11-29T22:00:00.123456789Z"
	tests := []struct {
		name        string
		requested   string
		lastHandled string
		want        bool
	}{
		{name: "no request, nothing handled", want: true},
		{name: "no request, an older one handled", lastHandled: "earlier", want: true},
		{name: "request not handled yet", requested: token, want: false},
		{name: "request handled", requested: token, lastHandled: token, want: true},
		{name: "an older request handled", requested: token, lastHandled: "2026-11-29T21:00:00Z", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &runner{requested: tt.requested}
			if got := r.handled(tt.lastHandled); got != tt.want {
				t.Errorf("handled(%q) = %v, want %v", tt.lastHandled, got, tt.want)
			}
		})
	}
}

func TestRequestReconcile(t *testing.T) {
	const ns, token = "flux-system", "2026-11-29T22:00:00.123456789Z"
	objectMeta := metav1.ObjectMeta{Namespace: ns, Name: SyncName, Annotations: map[string]string{"keep": "me"}}
	repo := &sourcev1.GitRepository{ObjectMeta: *objectMeta.DeepCopy()}
	ks := &kustomizev1.Kustomization{ObjectMeta: *objectMeta.DeepCopy()}
	tests := []struct {
		name    string
		objs    []client.Object
		wantErr string
	}{
		{name: "both exist", objs: []client.Object{repo, ks}},
		{name: "Kustomization missing", objs: []client.Object{repo}, wantErr: "requesting a reconcile of Kustomization flux-system/flux-system"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.Must()).WithObjects(tt.objs...).Build()
			err := requestReconcile(context.Background(), c, ns, token)
			wantErr(t, err, tt.wantErr)
			if err != nil {
				return
			}
			for _, obj := range []client.Object{&sourcev1.GitRepository{}, &kustomizev1.Kustomization{}} {
				if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: SyncName}, obj); err != nil {
					t.Fatal(err)
				}
				want := map[string]string{"keep": "me", meta.ReconcileRequestAnnotation: token}
				if diff := cmp.Diff(want, obj.GetAnnotations()); diff != "" {
					t.Errorf("%T annotations (-want +got):\n%s", obj, diff)
				}
			}
		})
	}
}
