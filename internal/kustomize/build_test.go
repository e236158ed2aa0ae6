package kustomize

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
)

func ids(objects []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objects))
	for _, o := range objects {
		out = append(out, ObjectID(o))
	}
	return out
}

func find(t *testing.T, objects []*unstructured.Unstructured, id string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objects {
		if ObjectID(o) == id {
			return o
		}
	}
	t.Fatalf("object %s not in %v", id, ids(objects))
	return nil
}

func TestBuildOverlays(t *testing.T) {
	root := newRoot(t, podinfoTree)
	for _, env := range []string{"dev", "prod"} {
		t.Run(env, func(t *testing.T) {
			res := mustBuild(t, BuildOptions{Root: root, Path: "./apps/" + env, NoRemoteBases: true})
			golden(t, "podinfo-"+env+".yaml", mustYAML(t, res))
			if !strings.HasPrefix(res.Checksum, "sha256:") || len(res.Checksum) != len("sha256:")+64 {
				t.Errorf("checksum %q is not sha256:<hex>", res.Checksum)
			}
		})
	}
}

func TestBuildSpecTransforms(t *testing.T) {
	root := newRoot(t, podinfoTree)
	opts := BuildOptions{
		Root:            root,
		Path:            "apps/prod",
		TargetNamespace: "apps",
		NamePrefix:      "p-",
		NameSuffix:      "-s",
		Patches: []meta.Patch{
			{
				// Strategic merge, selected by label.
				Patch: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: not-used
spec:
  template:
    metadata:
      annotations:
        cluster-autoscaler.kubernetes.io/safe-to-evict: "true"
`,
				Target: &meta.Selector{Kind: "Deployment", LabelSelector: "app.kubernetes.io/part-of=podinfo"},
			},
			{
				// JSON 6902, selected by name (a regular expression); names
				// are matched before the spec's prefix and suffix apply.
				Patch: `- op: add
  path: /spec/template/spec/securityContext
  value:
    runAsUser: 10000
`,
				Target: &meta.Selector{Group: "apps", Version: "v1", Kind: "Deployment", Name: "pod.*"},
			},
		},
		Images:     []meta.Image{{Name: "ghcr.io/stefanprodan/podinfo", NewTag: "6.6.0"}},
		Components: []string{"../components/ingress"},
	}
	plain := mustBuild(t, opts)

	opts.CommonMetadata = &kustomizev1.CommonMetadata{
		Labels:      map[string]string{"team": "web", "app.kubernetes.io/name": "overridden"},
		Annotations: map[string]string{"owner": "${not_substituted}"},
	}
	res := mustBuild(t, opts)
	golden(t, "podinfo-prod-spec.yaml", mustYAML(t, res))

	if res.Checksum != plain.Checksum {
		t.Errorf("commonMetadata changed the checksum (%s vs %s); Flux applies it after the digest", res.Checksum, plain.Checksum)
	}
	opts.SkipChecksum = true
	if skipped := mustBuild(t, opts); skipped.Checksum != "" || len(skipped.Objects) != len(res.Objects) {
		t.Errorf("SkipChecksum: checksum %q, %d objects, want none and %d", skipped.Checksum, len(skipped.Objects), len(res.Objects))
	}
	want := []string{
		// The Namespace object takes the target namespace's name, as
		// kustomize's namespace transformer does.
		"Namespace/apps",
		"Deployment/apps/p-podinfo-s",
		"Service/apps/p-podinfo-s",
		"HorizontalPodAutoscaler/apps/p-podinfo-s",
		"ConfigMap/apps/p-podinfo-config-s-5fbkckmbcc",
		"Ingress/apps/p-podinfo-s",
	}
	if diff := cmp.Diff(want, ids(res.Objects)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	dep := find(t, res.Objects, "Deployment/apps/p-podinfo-s")
	if got := dep.GetLabels()["team"]; got != "web" {
		t.Errorf("commonMetadata label not set: %v", dep.GetLabels())
	}
	if got := dep.GetLabels()["app.kubernetes.io/name"]; got != "overridden" {
		t.Errorf("commonMetadata did not override an existing label: %q", got)
	}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	c := containers[0].(map[string]any)
	if c["image"] != "registry.example.com/podinfo:6.6.0" {
		t.Errorf("spec.images did not merge with the overlay's images: %v", c["image"])
	}
	if !slices.Contains(toStrings(c["command"]), "--secure-port=9899") {
		t.Errorf("overlay component not applied: %v", c["command"])
	}
	if ann, _, _ := unstructured.NestedString(dep.Object, "spec", "template", "metadata", "annotations", "cluster-autoscaler.kubernetes.io/safe-to-evict"); ann != "true" {
		t.Error("strategic merge patch not applied")
	}
	if u, _, _ := unstructured.NestedInt64(dep.Object, "spec", "template", "spec", "securityContext", "runAsUser"); u != 10000 {
		t.Error("JSON 6902 patch not applied")
	}
	envFrom := c["envFrom"].([]any)[0].(map[string]any)["configMapRef"].(map[string]any)["name"]
	if envFrom != "p-podinfo-config-s-5fbkckmbcc" {
		t.Errorf("name references not updated: %v", envFrom)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

func TestBuildSpecReplacesPrefixAndNamespace(t *testing.T) {
	// Flux rewrites the root kustomization: spec values replace the file's
	// own namespace and prefix instead of stacking on them as an overlay
	// would.
	root := newRoot(t, map[string]string{
		"kustomization.yaml": `namespace: mine
namePrefix: file-
resources: [cm.yaml]
`,
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
	})
	res := mustBuild(t, BuildOptions{Root: root, NamePrefix: "spec-", TargetNamespace: "theirs"})
	if diff := cmp.Diff([]string{"ConfigMap/theirs/spec-cm"}, ids(res.Objects)); diff != "" {
		t.Error(diff)
	}
}

func TestBuildPatchTargetsSelectors(t *testing.T) {
	root := newRoot(t, map[string]string{
		"objects.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  labels: {tier: web}
  annotations: {patch-me: "yes"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
  labels: {tier: db}
---
apiVersion: v1
kind: Secret
metadata:
  name: a
  labels: {tier: secret}
`,
	})
	sm := `apiVersion: v1
kind: ConfigMap
metadata:
  name: ignored
data:
  patched: strategic
`
	json6902 := `[{"op": "add", "path": "/metadata/labels/json6902", "value": "yes"}]`
	res := mustBuild(t, BuildOptions{Root: root, Patches: []meta.Patch{
		{Patch: sm, Target: &meta.Selector{Kind: "ConfigMap", LabelSelector: "tier=db"}},
		{Patch: json6902, Target: &meta.Selector{Kind: "ConfigMap", AnnotationSelector: "patch-me=yes"}},
		{Patch: json6902, Target: &meta.Selector{Version: "v1", Kind: "Secret", Name: "^a$"}},
	}})
	a := find(t, res.Objects, "ConfigMap/a")
	b := find(t, res.Objects, "ConfigMap/b")
	s := find(t, res.Objects, "Secret/a")
	if _, ok := a.Object["data"]; ok {
		t.Error("strategic patch hit an object its labelSelector excludes")
	}
	if v, _, _ := unstructured.NestedString(b.Object, "data", "patched"); v != "strategic" {
		t.Error("strategic patch missed its target")
	}
	if a.GetLabels()["json6902"] != "yes" || b.GetLabels()["json6902"] == "yes" {
		t.Errorf("annotationSelector misapplied: a=%v b=%v", a.GetLabels(), b.GetLabels())
	}
	if s.GetLabels()["json6902"] != "yes" {
		t.Error("name-selected JSON 6902 patch missed the Secret")
	}
}

func TestBuildGeneratedKustomization(t *testing.T) {
	root := newRoot(t, map[string]string{
		"deploy/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gen\n",
		"deploy/z/last.yml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: last\n  namespace: gen\n",
		"deploy/a/first.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: first
  namespace: gen
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: second
  namespace: gen
`,
		"deploy/README.md":              "# not a manifest\n",
		"deploy/notes.txt":              "kind: nonsense",
		"deploy/sub/kustomization.yaml": "resources: [svc.yaml]\nnamePrefix: sub-\n",
		"deploy/sub/svc.yaml":           "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n  namespace: gen\nspec:\n  ports: [{port: 80}]\n",
		"deploy/sub/not-listed.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-listed\n",
		"deploy/empty.yaml":             "",
		"elsewhere/ignored.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ignored\n",
	})
	res := mustBuild(t, BuildOptions{Root: root, Path: "deploy", TargetNamespace: "target"})
	golden(t, "generated.yaml", mustYAML(t, res))
	want := []string{
		// Lexical walk order: a/first.yaml, empty.yaml, namespace.yaml,
		// sub (a kustomization), z/last.yml.
		"ConfigMap/target/first", "ConfigMap/target/second",
		"Namespace/target", "Service/target/sub-svc", "ConfigMap/target/last",
	}
	if diff := cmp.Diff(want, ids(res.Objects)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	for _, f := range res.Files {
		if strings.HasPrefix(f, "elsewhere/") || strings.HasSuffix(f, ".md") || f == "deploy/sub/not-listed.yaml" {
			t.Errorf("build read %s, which it does not need", f)
		}
	}
	if !slices.Contains(res.Files, "deploy/sub/svc.yaml") {
		t.Errorf("access log misses deploy/sub/svc.yaml: %v", res.Files)
	}
}

// TestBuildGeneratedExclude: BuildOptions.Exclude leaves files and
// directories out of a generated kustomization, and nothing out of a
// kustomization file of the path's own.
func TestBuildGeneratedExclude(t *testing.T) {
	root := newRoot(t, map[string]string{
		"deploy/namespace.yaml":         "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gen\n",
		"deploy/a/first.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n",
		"deploy/a/b/deep.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\n",
		"deploy/sub/kustomization.yaml": "resources: [cm.yaml]\n",
		"deploy/sub/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sub\n",
		"deploy/subway.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: subway\n",
		"own/kustomization.yaml":        "resources: [cm.yaml]\n",
		"own/cm.yaml":                   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\n",
	})
	for _, tt := range []struct {
		name    string
		path    string
		exclude []string
		want    []string
	}{
		{"nothing excluded", "deploy", nil, []string{"ConfigMap/deep", "ConfigMap/first", "Namespace/gen", "ConfigMap/sub", "ConfigMap/subway"}},
		{"a directory with everything below it", "deploy", []string{"deploy/a"}, []string{"Namespace/gen", "ConfigMap/sub", "ConfigMap/subway"}},
		{"a directory below one", "deploy", []string{"deploy/a/b"}, []string{"ConfigMap/first", "Namespace/gen", "ConfigMap/sub", "ConfigMap/subway"}},
		{"a kustomization directory, not a sibling sharing its prefix", "deploy", []string{"deploy/sub"}, []string{"ConfigMap/deep", "ConfigMap/first", "Namespace/gen", "ConfigMap/subway"}},
		{"a file", "deploy", []string{"deploy/namespace.yaml", "elsewhere"}, []string{"ConfigMap/deep", "ConfigMap/first", "ConfigMap/sub", "ConfigMap/subway"}},
		{"a kustomization file of the path's own is read as it is", "own", []string{"own/cm.yaml"}, []string{"ConfigMap/own"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := mustBuild(t, BuildOptions{Root: root, Path: tt.path, Exclude: tt.exclude})
			if diff := cmp.Diff(tt.want, ids(res.Objects)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildGeneratedRejectsNonKubernetesYAML(t *testing.T) {
	root := newRoot(t, map[string]string{
		"cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
		".sops.yaml": "creation_rules:\n  - path_regex: .*.yaml\n    age: age1xyz\n",
	})
	_, err := Build(context.Background(), BuildOptions{Root: root})
	if err == nil || !strings.Contains(err.Error(), "failed to decode Kubernetes YAML from .sops.yaml") {
		t.Fatalf("want a decode error naming .sops.yaml, got %v", err)
	}
	if strings.Contains(err.Error(), root) {
		t.Errorf("error leaks the temporary root: %v", err)
	}
}

func TestBuildGeneratedEmptyDirectory(t *testing.T) {
	root := newRoot(t, map[string]string{"docs/README.md": "nothing to apply\n"})
	res := mustBuild(t, BuildOptions{Root: root, Path: "docs", TargetNamespace: "x"})
	if len(res.Objects) != 0 {
		t.Errorf("want no objects, got %v", ids(res.Objects))
	}
}

func TestBuildKustomizationWithoutResources(t *testing.T) {
	// Only a generator: still buildable, as in Flux.
	root := newRoot(t, map[string]string{
		"kustomization.yaml": "configMapGenerator:\n- name: gen\n  literals: [a=b]\n",
	})
	res := mustBuild(t, BuildOptions{Root: root})
	if len(res.Objects) != 1 || !strings.HasPrefix(res.Objects[0].GetName(), "gen-") {
		t.Fatalf("unexpected objects %v", ids(res.Objects))
	}
	// The buildMetadata Flux adds to keep such a kustomization buildable
	// leaves kustomize's origin annotation on the output, in Flux too.
	if _, ok := res.Objects[0].GetAnnotations()["config.kubernetes.io/origin"]; !ok {
		t.Error("origin annotation missing")
	}
	// With spec.buildMetadata the fallback does not apply.
	res = mustBuild(t, BuildOptions{Root: root, BuildMetadata: []kustomizev1.BuildMetadataOption{kustomizev1.TransformerAnnotations}})
	if _, ok := res.Objects[0].GetAnnotations()["config.kubernetes.io/origin"]; ok {
		t.Error("spec.buildMetadata should replace the fallback")
	}
}

func TestBuildComponents(t *testing.T) {
	root := newRoot(t, podinfoTree)
	t.Run("missing component fails", func(t *testing.T) {
		_, err := Build(context.Background(), BuildOptions{Root: root, Path: "apps/dev", Components: []string{"../components/tls", "../components/nope"}})
		if err == nil || !strings.Contains(err.Error(), "nope") {
			t.Fatalf("want an error naming the missing component, got %v", err)
		}
	})
	t.Run("ignoreMissingComponents skips it", func(t *testing.T) {
		res := mustBuild(t, BuildOptions{Root: root, Path: "apps/dev", Components: []string{"../components/tls", "../components/nope"}, IgnoreMissingComponents: true})
		dep := find(t, res.Objects, "Deployment/podinfo/podinfo")
		containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
		if !slices.Contains(toStrings(containers[0].(map[string]any)["command"]), "--secure-port=9899") {
			t.Error("existing component not applied")
		}
	})
	t.Run("remote component path refused", func(t *testing.T) {
		_, err := Build(context.Background(), BuildOptions{Root: root, Path: "apps/dev", Components: []string{"https://github.com/x/y//c"}})
		if !errors.Is(err, ErrUnsafePath) || !strings.Contains(err.Error(), "must be local and relative") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestBuildNeverWritesTheSource(t *testing.T) {
	root := newRoot(t, podinfoTree)
	before := snapshot(t, root)
	mustBuild(t, BuildOptions{Root: root, Path: "apps/prod", NamePrefix: "x-", Components: []string{"../components/ingress"}})
	mustBuild(t, BuildOptions{Root: root, Path: "apps/base/podinfo/..", NoRemoteBases: true, IgnoreMissingComponents: true})
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("source tree changed:\n%s", diff)
	}
}

func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestChecksumMatchesKustomizeOutput(t *testing.T) {
	// The digest must be the one kustomize-controller computes: sha256 of
	// kustomize's own multi-document rendering of the same build.
	root := newRoot(t, podinfoTree)
	res := mustBuild(t, BuildOptions{Root: root, Path: "apps/prod"})

	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = kustypes.LoadRestrictionsNone
	rm, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), filepath.Join(root, "apps/prod"))
	if err != nil {
		t.Fatal(err)
	}
	y, err := rm.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(y)
	if want := "sha256:" + hex.EncodeToString(sum[:]); res.Checksum != want {
		t.Errorf("checksum %s, kustomize's rendering hashes to %s", res.Checksum, want)
	}
	if got := mustYAML(t, res); string(got) != string(y) {
		t.Errorf("ToYAML differs from kustomize's rendering:\n%s", cmp.Diff(string(y), string(got)))
	}
}

func TestBuildPostBuild(t *testing.T) {
	root := newRoot(t, map[string]string{
		"ns.yaml": `apiVersion: v1
kind: Namespace
metadata:
  name: apps
  labels:
    environment: ${cluster_env:=dev}
    region: "${cluster_region}"
`,
	})
	opts := BuildOptions{
		Root:           root,
		CommonMetadata: &kustomizev1.CommonMetadata{Labels: map[string]string{"literal": "${cluster_region}"}},
		PostBuild:      &PostBuild{Vars: map[string]string{"cluster_region": "eu-central-1"}},
	}
	res := mustBuild(t, opts)
	got := res.Objects[0].GetLabels()
	want := map[string]string{"environment": "dev", "region": "eu-central-1", "literal": "${cluster_region}"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	sum, _ := Checksum([]*unstructured.Unstructured{withoutLabel(res.Objects[0], "literal")})
	if sum != res.Checksum {
		t.Error("checksum must cover the substituted objects, without commonMetadata")
	}

	opts.PostBuild.Vars = map[string]string{"other": "x"}
	_, err := Build(context.Background(), opts)
	if !errors.Is(err, ErrVariableNotSet) || !strings.Contains(err.Error(), `"cluster_region"`) || !strings.Contains(err.Error(), "Namespace/apps") {
		t.Fatalf("want a strict-mode error naming the variable and the object, got %v", err)
	}
}

func withoutLabel(o *unstructured.Unstructured, key string) *unstructured.Unstructured {
	c := o.DeepCopy()
	l := c.GetLabels()
	delete(l, key)
	c.SetLabels(l)
	return c
}

func TestFromSpec(t *testing.T) {
	spec := &kustomizev1.KustomizationSpec{
		Path:            "./deploy",
		TargetNamespace: "ns",
		Images:          []meta.Image{{Name: "a", NewTag: "b"}},
		PostBuild:       &kustomizev1.PostBuild{SubstituteStrategy: kustomizev1.SubstituteAlways},
	}
	opts := FromSpec("/src", spec)
	if opts.Root != "/src" || opts.Path != "./deploy" || opts.TargetNamespace != "ns" || len(opts.Images) != 1 ||
		opts.PostBuild == nil || opts.PostBuild.Options.Strategy != kustomizev1.SubstituteAlways {
		t.Errorf("unexpected options %+v", opts)
	}
}
