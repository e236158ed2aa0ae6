package release

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// requestLog records the paths of the GETs a rest.Config sends.
type requestLog struct {
	mu    sync.Mutex
	paths []string
	next  http.RoundTripper
}

func (l *requestLog) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.paths = append(l.paths, req.URL.Path)
	l.mu.Unlock()
	return l.next.RoundTrip(req)
}

func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.paths
	l.paths = nil
	return out
}

// TestSharedCapabilitiesAskOnlyWhatChanged runs against the real API
// server: the first read is Helm's (version, then the discovery documents);
// a second one costs /version and a 304 for /apis; a CRD created in between
// makes the next read see its group-version, and its deletion removes it.
func TestSharedCapabilitiesAskOnlyWhatChanged(t *testing.T) {
	env := testenv.Get(t)
	log := &requestLog{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { log.next = rt; return log })
	f := newSharedFactory(cfg)
	if f.caps == nil {
		t.Fatal("no shared capabilities for a reachable cluster")
	}
	dc, err := f.getter.ToDiscoveryClient()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	get := func() []string {
		t.Helper()
		caps, err := f.caps.get(ctx, dc)
		if err != nil {
			t.Fatal(err)
		}
		if caps.KubeVersion.Version == "" || !caps.APIVersions.Has("apps/v1") {
			t.Fatalf("capabilities %v lack the server's version or apps/v1", caps)
		}
		return caps.APIVersions
	}

	first := get()
	if paths := log.take(); !slices.Contains(paths, "/version") || !slices.Contains(paths, "/api") || countOf(paths, "/apis") < 2 {
		t.Errorf("first read asked %v, want /version, /api and /apis (probe and read)", paths)
	}
	second := get()
	if paths := log.take(); !slices.Equal(paths, []string{"/version", "/apis"}) {
		t.Errorf("second read asked %v, want only /version and the conditional /apis", paths)
	}
	if !slices.Equal(first, second) {
		t.Errorf("second read %v differs from the first %v", second, first)
	}

	group := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")) + ".weir.dev"
	crd := capsCRD(group)
	if err := env.Client.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), crd) })
	testenv.Eventually(t, testenv.DefaultTimeout, func(context.Context) (bool, string) {
		return slices.Contains(get(), group+"/v1"), "new CRD's group-version not in .Capabilities"
	})
	if err := env.Client.Delete(ctx, crd); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.DefaultTimeout, func(context.Context) (bool, string) {
		return !slices.Contains(get(), group+"/v1"), "deleted CRD's group-version still in .Capabilities"
	})
}

func countOf(paths []string, p string) int {
	n := 0
	for _, q := range paths {
		if q == p {
			n++
		}
	}
	return n
}

func capsCRD(group string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
}
