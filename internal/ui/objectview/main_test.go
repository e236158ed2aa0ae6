package objectview

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// storage serves artifacts on 127.0.0.1 as the source controller does.
var storage *artifact.Storage

// The tests run against the API server alone: no controller writes a
// status, the tests write them as a controller would.
func TestMain(m *testing.M) {
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) {
		o.Setup = func(ctx context.Context, _ *testenv.Env) error {
			var err error
			storage, err = testenv.StartArtifactStorage(ctx)
			return err
		}
	})
}

// applyYAML creates every document of text, the namespace NS replaced by
// ns, then writes the status a document carries through the status
// subresource.
func applyYAML(t *testing.T, ns, text string) {
	t.Helper()
	env := testenv.Get(t)
	ctx := context.Background()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(strings.ReplaceAll(text, "NS", ns)), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatal(err)
		}
		if len(u.Object) == 0 {
			continue
		}
		status, hasStatus := u.Object["status"].(map[string]any)
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		if hasStatus {
			u.Object["status"] = status
			if err := env.Client.Status().Update(ctx, u); err != nil {
				t.Fatalf("writing the status of %s %s: %v", u.GetKind(), u.GetName(), err)
			}
		}
	}
}

// applyAs server-side applies the documents of text (NS replaced) as the
// field manager, as a controller would have applied them.
func applyAs(t *testing.T, ns, manager, text string) {
	t.Helper()
	env := testenv.Get(t)
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(strings.ReplaceAll(text, "NS", ns)), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatal(err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := env.Client.Patch(context.Background(), u, client.Apply, client.FieldOwner(manager), client.ForceOwnership); err != nil { //nolint:staticcheck // client.Apply with unstructured objects
			t.Fatalf("applying %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}
