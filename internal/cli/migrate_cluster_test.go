package cli_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// widgetCRD is a Flux-labelled CRD of a test group serving v1alpha1 and
// v1: weir's own CRDs serve one version each, so none of them can show a
// stored version being migrated away.
func widgetCRD(storage string) *apiextensionsv1.CustomResourceDefinition {
	schemaProps := &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
		},
	}
	version := func(name string) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{
			Name: name, Served: true, Storage: name == storage,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schemaProps},
		}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "widgets.migrate.weir.test",
			Labels: map[string]string{"app.kubernetes.io/part-of": "flux"},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "migrate.weir.test",
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget",
			},
			Scope:    apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{version("v1alpha1"), version("v1")},
		},
	}
}

// TestMigrateCluster stores a Widget at v1alpha1 (applied server-side, so
// its managed fields name v1alpha1), moves the CRD's storage version to
// v1, and runs `weir migrate`: the Widget is rewritten, its managed fields
// moved to v1, and status.storedVersions trimmed to v1. A second run finds
// nothing left to trim.
func TestMigrateCluster(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	crd := widgetCRD("v1alpha1")
	if err := env.Client.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(ctx, crd)
		testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), &apiextensionsv1.CustomResourceDefinition{})
			return apierrors.IsNotFound(err), "waiting for the Widget CRD to go"
		})
	})
	widget := &unstructured.Unstructured{}
	widget.SetGroupVersionKind(schema.GroupVersionKind{Group: "migrate.weir.test", Version: "v1alpha1", Kind: "Widget"})
	widget.SetNamespace(ns)
	widget.SetName("gear")
	widget.Object["spec"] = map[string]any{"teeth": int64(12)}
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(widget.DeepCopy()), client.FieldOwner("test"))
		return err == nil, "applying the Widget: " + errString(err)
	})
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		var c apiextensionsv1.CustomResourceDefinition
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), &c); err != nil {
			return false, err.Error()
		}
		c.Spec.Versions = widgetCRD("v1").Spec.Versions
		if err := env.Client.Update(ctx, &c); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	stored := func() []string {
		var c apiextensionsv1.CustomResourceDefinition
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), &c); err != nil {
			t.Fatal(err)
		}
		return c.Status.StoredVersions
	}
	testenv.Eventually(t, testenv.DefaultTimeout, func(context.Context) (bool, string) {
		got := stored()
		return slices.Equal(got, []string{"v1alpha1", "v1"}), "stored versions " + strings.Join(got, ",")
	})

	before := &unstructured.Unstructured{}
	before.SetGroupVersionKind(schema.GroupVersionKind{Group: "migrate.weir.test", Version: "v1", Kind: "Widget"})
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gear"}, before); err != nil {
		t.Fatal(err)
	}
	if mf := before.GetManagedFields(); len(mf) == 0 || mf[0].APIVersion != "migrate.weir.test/v1alpha1" {
		t.Fatalf("managed fields before migrating: %+v, want an entry at v1alpha1", mf)
	}

	res := weir(t, "migrate")
	if res.Code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", res.Code, res.Stderr)
	}
	// Every Flux object of the shared API server is rewritten too: the
	// golden keeps the lines about the Widget, the first and the last.
	assertGolden(t, "migrate/cluster.golden", widgetLines(res.Stderr), ns)
	if got := stored(); !slices.Equal(got, []string{"v1"}) {
		t.Errorf("stored versions %v, want [v1]", got)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(schema.GroupVersionKind{Group: "migrate.weir.test", Version: "v1", Kind: "Widget"})
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gear"}, got); err != nil {
		t.Fatal(err)
	}
	for _, mf := range got.GetManagedFields() {
		if mf.APIVersion != "migrate.weir.test/v1" {
			t.Errorf("managed fields of %s at %s, want migrate.weir.test/v1", mf.Manager, mf.APIVersion)
		}
	}

	again := weir(t, "migrate")
	if again.Code != 0 {
		t.Fatalf("second run: exit code %d; stderr:\n%s", again.Code, again.Stderr)
	}
	assertGolden(t, "migrate/cluster-again.golden", widgetLines(again.Stderr), ns)
}

func widgetLines(stderr string) string {
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	var keep []string
	for i, l := range lines {
		if i == 0 || i == len(lines)-1 || strings.Contains(l, "Widget") || strings.Contains(l, "widgets.") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n") + "\n"
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
