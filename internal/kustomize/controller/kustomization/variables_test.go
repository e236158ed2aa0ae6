package kustomization

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/scheme"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// countingReader counts the Gets of each object through it.
type countingReader struct {
	client.Reader
	mu   sync.Mutex
	gets map[string]int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.mu.Lock()
	c.gets[key.String()]++
	c.mu.Unlock()
	return c.Reader.Get(ctx, key, obj, opts...)
}

// TestVariablesReadOncePerBuild: on a build-cache miss, the substituteFrom
// objects read for the cache key are the ones the build substitutes; each
// is read once, and the build uses their values.
func TestVariablesReadOncePerBuild(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "vars", Namespace: "ns"}, Data: map[string]string{"color": "blue"}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "secret-vars", Namespace: "ns"}, Data: map[string][]byte{"size": []byte("large")}}
	reader := &countingReader{Reader: fake.NewClientBuilder().WithScheme(s).WithObjects(cm, secret).Build(), gets: map[string]int{}}

	tgz := testenv.TarGz(t,
		testenv.TarEntry{Name: "app/kustomization.yaml", Body: "resources: [cm.yaml]\n"},
		testenv.TarEntry{Name: "app/cm.yaml", Body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: out\ndata:\n  color: ${color}\n  size: ${size}\n"},
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(tgz) }))
	defer srv.Close()
	digest, err := artifact.Digest(artifact.SHA256, bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}

	r := &Reconciler{APIReader: reader, Fetcher: &artifact.Fetcher{}}
	obj := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"},
		Spec: kustomizev1.KustomizationSpec{Path: "./app", PostBuild: &kustomizev1.PostBuild{
			SubstituteFrom: []kustomizev1.SubstituteReference{
				{Kind: kustomizev1.SubstituteFromConfigMap, Name: "vars"},
				{Kind: kustomizev1.SubstituteFromSecret, Name: "secret-vars"},
			},
		}},
	}
	a := &meta.Artifact{URL: srv.URL + "/artifact.tar.gz", Digest: digest, Revision: "main@sha1:1"}
	objects, err := r.fetchAndBuild(context.Background(), obj, a, &outcome{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 1 {
		t.Fatalf("built %d objects, want 1", len(objects))
	}
	if data, _, _ := unstructured.NestedStringMap(objects[0].Object, "data"); data["color"] != "blue" || data["size"] != "large" {
		t.Errorf("built data %v, want the variables substituted", data)
	}
	for _, key := range []string{"ns/vars", "ns/secret-vars"} {
		if n := reader.gets[key]; n != 1 {
			t.Errorf("%s read %d times on a cache miss, want 1", key, n)
		}
	}
}
