package cli_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func TestExport(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "export/objects.yaml", ns)

	steps := []struct {
		name   string
		args   []string
		code   int
		golden string
	}{
		{"one source", []string{"export", "source", "git", "podinfo"}, 0, "export/source-git.golden"},
		{"all kustomizations", []string{"export", "ks", "--all"}, 0, "export/ks-all.golden"},
		{"name required", []string{"export", "ks"}, 1, "export/name-required.golden"},
		{"missing", []string{"export", "ks", "missing"}, 1, "export/missing.golden"},
		{"none", []string{"export", "source", "oci", "--all"}, 1, "export/none.golden"},
	}
	for _, s := range steps {
		res := weir(t, append(s.args, "-n", ns)...)
		if res.Code != s.code {
			t.Errorf("%s: exit code %d, want %d; stderr:\n%s", s.name, res.Code, s.code, res.Stderr)
		}
		assertGolden(t, s.golden, "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr, ns)
	}
}

// TestExportWithCredentials: --with-credentials prints, after each source
// with a spec.secretRef, the Secret it names (name, namespace, type, data),
// nothing for a source without one, and fails naming a Secret that is
// missing.
func TestExportWithCredentials(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	applyFixture(t, "export/credentials.yaml", ns)

	steps := []struct {
		name   string
		args   []string
		code   int
		golden string
	}{
		{"all git", []string{"export", "source", "git", "--all", "--with-credentials"}, 0, "export/credentials-git.golden"},
		{"one oci", []string{"export", "source", "oci", "manifests", "--with-credentials"}, 0, "export/credentials-oci.golden"},
		{"missing secret", []string{"export", "source", "helm", "charts", "--with-credentials"}, 1, "export/credentials-missing.golden"},
	}
	for _, s := range steps {
		res := weir(t, append(s.args, "-n", ns)...)
		if res.Code != s.code {
			t.Errorf("%s: exit code %d, want %d; stderr:\n%s", s.name, res.Code, s.code, res.Stderr)
		}
		assertGolden(t, s.golden, res.Output(), ns)
	}
	if res := weir(t, "export", "source", "git", "private", "-n", ns); strings.Contains(res.Stdout, "kind: Secret") {
		t.Errorf("without --with-credentials the Secret was exported:\n%s", res.Stdout)
	}
}

// TestExportRoundTrips applies what export printed (server-side, dry run)
// and checks that nothing in the objects' specs would change.
func TestExportRoundTrips(t *testing.T) {
	tests := []struct {
		fixture string
		exports [][]string
		want    int
	}{
		{"export/objects.yaml", [][]string{{"export", "source", "git", "--all"}, {"export", "ks", "--all"}}, 3},
		{"receiver/objects.yaml", [][]string{{"export", "receiver", "--all"}}, 4},
		{"alert/objects.yaml", [][]string{{"export", "alert-provider", "--all"}, {"export", "alert", "--all"}}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) { assertExportRoundTrips(t, tt.fixture, tt.exports, tt.want) })
	}
}

func assertExportRoundTrips(t *testing.T, fixture string, exports [][]string, want int) {
	t.Helper()
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, fixture, ns)
	var docs []string
	for _, args := range exports {
		res := weir(t, append(args, "-n", ns)...)
		if res.Code != 0 {
			t.Fatalf("%v: exit %d: %s", args, res.Code, res.Stderr)
		}
		docs = append(docs, res.Stdout)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(strings.Join(docs, "")), 4096)
	n := 0
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		if len(u.Object) == 0 {
			continue
		}
		n++
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(u.GroupVersionKind())
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(u), live); err != nil {
			t.Fatal(err)
		}
		applied := u.DeepCopy()
		if err := env.Client.Patch(t.Context(), applied, client.Apply, client.FieldOwner("weir-export-test"), client.DryRunAll, client.ForceOwnership); err != nil { //nolint:staticcheck // SA1019: the test reads the dry-run result back into the unstructured object, which Patch does in place
			t.Fatalf("applying exported %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		if applied.GetGeneration() != live.GetGeneration() {
			t.Errorf("applying exported %s %s would change its spec (generation %d → %d)", u.GetKind(), u.GetName(), live.GetGeneration(), applied.GetGeneration())
		}
	}
	if n != want {
		t.Errorf("exported %d objects, want %d", n, want)
	}
}

func TestDelete(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "export/objects.yaml", ns)

	steps := []struct {
		name, stdin string
		args        []string
		code        int
		golden      string
	}{
		{"refused", "n\n", []string{"delete", "ks", "apps"}, 1, "delete/refused.golden"},
		{"no answer", "", []string{"delete", "ks", "apps"}, 1, "delete/no-answer.golden"},
		{"confirmed", "y\n", []string{"delete", "kustomization", "apps"}, 0, "delete/confirmed.golden"},
		{"silent", "", []string{"delete", "source", "git", "podinfo", "-s"}, 0, "delete/silent.golden"},
		{"gone", "", []string{"delete", "ks", "apps", "--silent"}, 1, "delete/gone.golden"},
		{"name required", "", []string{"delete", "ks"}, 1, "delete/name-required.golden"},
	}
	for _, s := range steps {
		res := weirIO(t.Context(), t, s.stdin, nil, append(s.args, "-n", ns)...)
		if res.Code != s.code {
			t.Errorf("%s: exit code %d, want %d; stderr:\n%s", s.name, res.Code, s.code, res.Stderr)
		}
		assertGolden(t, s.golden, "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr, ns)
	}
	res := weir(t, "get", "all", "-n", ns, "-o", "name")
	if want := "kustomization.kustomize.toolkit.fluxcd.io/infra\n"; res.Stdout != want {
		t.Errorf("left after deletes:\n%s\nwant:\n%s", res.Stdout, want)
	}
}
