package cli_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// writeFleet lays out a small repository: a base, a dev overlay with a
// patch and a variable, and the Kustomization that builds it.
func writeFleet(t *testing.T, ns string) (root, ksFile string) {
	t.Helper()
	root = t.TempDir()
	files := map[string]string{
		".git/HEAD":                    "ref: refs/heads/main\n",
		"apps/base/kustomization.yaml": "resources:\n- config.yaml\n- secret.yaml\n",
		"apps/base/config.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  env: ${env}\n  replicas: \"1\"\n",
		"apps/base/secret.yaml":        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  token: do-not-print-me\n",
		"apps/dev/kustomization.yaml": `resources:
- ../base
patches:
- target: {kind: ConfigMap, name: app}
  patch: |
    - op: replace
      path: /data/replicas
      value: "2"
`,
		"clusters/dev/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
spec:
  interval: 10m
  path: ./apps/dev
  prune: true
  targetNamespace: ` + ns + `
  sourceRef:
    kind: GitRepository
    name: fleet
  postBuild:
    substitute:
      env: dev
`,
	}
	writeFiles(t, root, files)
	return root, filepath.Join(root, "clusters/dev/apps.yaml")
}

func TestBuildKustomizationOffline(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	root, ksFile := writeFleet(t, ns)
	r := weir(t, "build", "kustomization", "apps", "-n", ns, "--path", filepath.Join(root, "apps/dev"),
		"--kustomization-file", ksFile, "--dry-run")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Output())
	}
	if strings.Contains(r.Stdout, "do-not-print-me") {
		t.Error("build printed a Secret value")
	}
	assertGolden(t, "build/offline.golden", r.Output(), ns)

	r = weir(t, "build", "kustomization", "apps", "-n", ns, "--path", filepath.Join(root, "apps/dev"), "--dry-run")
	if r.Code == 0 || !strings.Contains(r.Stderr, "--dry-run needs --kustomization-file") {
		t.Errorf("dry-run without a file: exit %d\n%s", r.Code, r.Output())
	}
}

// TestDiffKustomization walks diff through its exit codes: everything new
// before anything is applied (1), nothing after the objects are applied as
// the controller applies them (0), a local edit shown as a diff (1), and a
// broken path (2).
func TestDiffKustomization(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	root, ksFile := writeFleet(t, ns)
	path := filepath.Join(root, "apps/dev")
	diff := func() result {
		return weir(t, "diff", "kustomization", "apps", "-n", ns, "--path", path, "--kustomization-file", ksFile)
	}

	r := diff()
	if r.Code != 1 {
		t.Fatalf("before apply: exit %d, want 1\n%s", r.Code, r.Output())
	}
	assertGolden(t, "diff/created.golden", r.Output(), ns)

	// Apply what build renders, as the controller would.
	b := weir(t, "build", "kustomization", "apps", "-n", ns, "--path", path, "--kustomization-file", ksFile, "--dry-run")
	objects := decodeObjects(t, b.Stdout)
	for _, o := range objects {
		if o.GetKind() == "Secret" {
			_ = unstructured.SetNestedStringMap(o.Object, map[string]string{"token": "do-not-print-me"}, "stringData")
			delete(o.Object, "data")
		}
	}
	mgr := ssa.NewManager(env.Client, ssa.Options{})
	if _, err := mgr.Apply(context.Background(), objects, ssa.ApplyOptions{Owner: &ssa.Owner{Name: "apps", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	if r := diff(); r.Code != 0 || r.Stdout != "" {
		t.Fatalf("after apply: exit %d, want 0 and no output\n%s", r.Code, r.Output())
	}

	overlay := filepath.Join(path, "kustomization.yaml")
	data, _ := os.ReadFile(overlay)
	if err := os.WriteFile(overlay, []byte(strings.Replace(string(data), `value: "2"`, `value: "3"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(root, "apps/base/secret.yaml")
	if err := os.WriteFile(secret, []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  token: rotated-never-printed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = diff()
	if r.Code != 1 {
		t.Fatalf("after an edit: exit %d, want 1\n%s", r.Code, r.Output())
	}
	if strings.Contains(r.Stdout, "rotated-never-printed") || strings.Contains(r.Stdout, "do-not-print-me") {
		t.Error("diff printed a Secret value")
	}
	assertGolden(t, "diff/drifted.golden", r.Output(), ns)

	r = weir(t, "diff", "kustomization", "apps", "-n", ns, "--path", filepath.Join(root, "nope"), "--kustomization-file", ksFile)
	if r.Code != 2 {
		t.Errorf("missing path: exit %d, want 2\n%s", r.Code, r.Output())
	}
}

func decodeObjects(t *testing.T, stream string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(stream), 4096)
	var out []*unstructured.Unstructured
	for {
		o := &unstructured.Unstructured{}
		if err := dec.Decode(&o.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatal(err)
		}
		if len(o.Object) > 0 {
			out = append(out, o)
		}
	}
}
