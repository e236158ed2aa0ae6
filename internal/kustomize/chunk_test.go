package kustomize

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
)

// manyFiles is a directory of n manifests of several shapes the namespace
// transformer treats differently: namespaced objects with and without a
// namespace of their own, cluster-scoped ones, Deployments naming a
// ServiceAccount and a ConfigMap of other files (far enough to fall in
// other runs), and files of several documents.
func manyFiles(n int) map[string]string {
	files := map[string]string{}
	for i := range n {
		var doc string
		switch i % 5 {
		case 0:
			doc = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%04d\ndata:\n  v: %q\n", i, fmt.Sprint(i))
		case 1:
			doc = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%04d\n  namespace: elsewhere\n", i)
		case 2:
			doc = fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: role-%04d\nrules: []\n", i)
		case 3:
			doc = fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d-%04d\nspec:\n"+
				"  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n    spec:\n"+
				"      serviceAccountName: sa-%04d\n      containers: [{name: c, image: nginx}]\n"+
				"      volumes: [{name: v, configMap: {name: cm-0000}}]\n", i, (i+151)/5*5-1)
		default:
			doc = fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa-%04d\n---\n"+
				"apiVersion: v1\nkind: Secret\nmetadata:\n  name: s-%04d\nstringData: {k: v}\n", i, i)
		}
		files[fmt.Sprintf("big/f-%04d.yaml", i)] = doc
	}
	return files
}

// oneRun builds opts with kustomize run once over the whole tree.
func oneRun(t *testing.T, opts BuildOptions) (*Result, error) {
	t.Helper()
	defer func(n int) { chunkSize = n }(chunkSize)
	chunkSize = 1 << 30
	return build(t.Context(), opts)
}

func TestBuildChunkedMatchesOneRun(t *testing.T) {
	root := newRoot(t, manyFiles(250))
	for _, ns := range []string{"", "apps"} {
		opts := BuildOptions{Root: root, Path: "./big", TargetNamespace: ns}
		want, err := oneRun(t, opts)
		if err != nil {
			t.Fatal(err)
		}
		got := mustBuild(t, opts)
		if len(got.Objects) != 300 {
			t.Errorf("namespace %q: %d objects, want 300", ns, len(got.Objects))
		}
		if diff := cmp.Diff(string(mustYAML(t, want)), string(mustYAML(t, got))); diff != "" {
			t.Errorf("namespace %q: split build differs from one run (-one +split):\n%s", ns, diff)
		}
		if got.Checksum != want.Checksum {
			t.Errorf("namespace %q: checksum %s, want %s", ns, got.Checksum, want.Checksum)
		}
	}
}

// TestBuildChunkedConflict checks that two files in different chunks
// defining one object fail as one kustomize run fails.
func TestBuildChunkedConflict(t *testing.T) {
	for name, second := range map[string]string{
		// the same object twice: kustomize refuses the second on reading it
		"same id": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-0000\n",
		// two objects the target namespace makes one
		"same after the namespace": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-0000\n  namespace: x\n",
	} {
		t.Run(name, func(t *testing.T) {
			files := manyFiles(250)
			files["big/zz-last.yaml"] = second
			opts := BuildOptions{Root: newRoot(t, files), Path: "./big", TargetNamespace: "apps"}
			_, want := oneRun(t, opts)
			if want == nil {
				t.Fatal("one run: no error")
			}
			_, err := build(t.Context(), opts)
			if err == nil || err.Error() != want.Error() {
				t.Errorf("split build: %v\nwant %v", err, want)
			}
		})
	}
}

// TestBuildChunkedLinkedKinds checks that a RoleBinding whose subject
// kustomize completes with the namespace of a ServiceAccount in another
// run gets it, as in one run.
func TestBuildChunkedLinkedKinds(t *testing.T) {
	files := manyFiles(250)
	files["big/zz-rb.yaml"] = "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rb\n" +
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\n" +
		"subjects:\n- {kind: ServiceAccount, name: sa-0004}\n"
	opts := BuildOptions{Root: newRoot(t, files), Path: "./big", TargetNamespace: "apps"}
	want, err := oneRun(t, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := mustBuild(t, opts)
	if diff := cmp.Diff(string(mustYAML(t, want)), string(mustYAML(t, got))); diff != "" {
		t.Errorf("split build differs from one run (-one +split):\n%s", diff)
	}
	rb := find(t, got.Objects, "RoleBinding/apps/rb")
	subjects, _, _ := unstructured.NestedSlice(rb.Object, "subjects")
	if ns := subjects[0].(map[string]any)["namespace"]; ns != "apps" {
		t.Errorf("subject namespace = %v, want apps (from the ServiceAccount)", ns)
	}
}

func TestChunkable(t *testing.T) {
	root := newRoot(t, manyFiles(250))
	writeTree(t, root, map[string]string{
		"withbase/base/kustomization.yaml": "resources: [cm.yaml]\n",
		"withbase/base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base}\n",
	})
	for i := range 150 {
		writeTree(t, root, map[string]string{fmt.Sprintf("withbase/f-%04d.yaml", i): fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", i)})
	}
	small := newRoot(t, manyFiles(50))
	hashed := manyFiles(250)
	hashed["big/zz.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: h\n  annotations: {kustomize.config.k8s.io/needs-hash: \"true\"}\n"
	hashedRoot := newRoot(t, hashed)
	for _, tc := range []struct {
		name string
		opts BuildOptions
		want bool
	}{
		{"target namespace", BuildOptions{Root: root, Path: "big", TargetNamespace: "apps"}, true},
		{"no transformation", BuildOptions{Root: root, Path: "big"}, true},
		{"few files", BuildOptions{Root: small, Path: "big", TargetNamespace: "apps"}, false},
		{"a name hash", BuildOptions{Root: hashedRoot, Path: "big", TargetNamespace: "apps"}, false},
		{"a base among the files", BuildOptions{Root: root, Path: "withbase"}, false},
		{"name prefix", BuildOptions{Root: root, Path: "big", NamePrefix: "p-"}, false},
		{"name suffix", BuildOptions{Root: root, Path: "big", NameSuffix: "-s"}, false},
		{"patches", BuildOptions{Root: root, Path: "big", Patches: []meta.Patch{{Patch: "[]"}}}, false},
		{"images", BuildOptions{Root: root, Path: "big", Images: []meta.Image{{Name: "a", NewTag: "b"}}}, false},
		{"components", BuildOptions{Root: root, Path: "big", Components: []string{"../withbase/base"}}, false},
		{"build metadata", BuildOptions{Root: root, Path: "big", BuildMetadata: []kustomizev1.BuildMetadataOption{"originAnnotations"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfs, dir, err := openPath(&tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			rk, err := prepareKustomization(cfs, dir, &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := chunkable(rk, cfs, dir, &tc.opts); got != tc.want {
				t.Errorf("chunkable = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBuildChunkedRuns calls the split build itself, to check that it
// does the work (ok) rather than leaving it to the single run, and that
// its output is one run's.
func TestBuildChunkedRuns(t *testing.T) {
	withRB := manyFiles(250)
	withRB["big/f-0002-rb.yaml"] = "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rb\n" +
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\n" +
		"subjects:\n- {kind: ServiceAccount, name: sa-0244}\n"
	withRB["big/f-0003-svc.yaml"] = "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports: [{port: 80}]\n"
	local := manyFiles(250)
	local["big/f-0002-local.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n" +
		"  annotations: {config.kubernetes.io/local-config: \"true\"}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n"
	for name, files := range map[string]map[string]string{"linked kinds": withRB, "local config": local} {
		t.Run(name, func(t *testing.T) {
			opts := BuildOptions{Root: newRoot(t, files), Path: "./big", TargetNamespace: "apps"}
			want, err := oneRun(t, opts)
			if err != nil {
				t.Fatal(err)
			}
			cfs, dir, err := openPath(&opts)
			if err != nil {
				t.Fatal(err)
			}
			rk, err := prepareKustomization(cfs, dir, &opts)
			if err != nil {
				t.Fatal(err)
			}
			objs, ok, err := buildChunked(cfs, dir, rk, &opts)
			if err != nil || !ok {
				t.Fatalf("buildChunked: ok %v, %v", ok, err)
			}
			got, err := ToYAML(objs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(mustYAML(t, want)), string(got)); diff != "" {
				t.Errorf("split build differs from one run (-one +split):\n%s", diff)
			}
		})
	}
}

// TestBuildRunsReported: a split build tells Runs every kind before the
// first run, then each run's objects, which together are the result's; a
// build whose objects post-processing changes, or that is not split,
// tells nothing.
func TestBuildRunsReported(t *testing.T) {
	root := newRoot(t, manyFiles(250))
	var kinds []string
	var runs [][]*unstructured.Unstructured
	opts := BuildOptions{Root: root, Path: "./big", TargetNamespace: "apps",
		Runs: func(gks []schema.GroupKind) func([]*unstructured.Unstructured) {
			for _, gk := range gks {
				kinds = append(kinds, gk.String())
			}
			return func(objs []*unstructured.Unstructured) { runs = append(runs, objs) }
		}}
	res := mustBuild(t, opts)
	slices.Sort(kinds)
	if want := []string{"ClusterRole.rbac.authorization.k8s.io", "ConfigMap", "Deployment.apps", "Secret", "ServiceAccount"}; !slices.Equal(kinds, want) {
		t.Errorf("kinds = %v, want %v", kinds, want)
	}
	if len(runs) < 2 {
		t.Fatalf("%d runs reported, want the split build's", len(runs))
	}
	reported := map[objectKey]*unstructured.Unstructured{}
	for _, run := range runs {
		for _, o := range run {
			reported[keyOf(o)] = o
		}
	}
	if len(reported) != len(res.Objects) {
		t.Errorf("%d objects reported, result has %d", len(reported), len(res.Objects))
	}
	for _, o := range res.Objects {
		if r := reported[keyOf(o)]; r == nil || !cmp.Equal(r.Object, o.Object) {
			t.Errorf("%v: reported %v, result %v", keyOf(o), r, o.Object)
		}
	}

	small := newRoot(t, manyFiles(10))
	for name, change := range map[string]func(*BuildOptions){
		"postBuild": func(o *BuildOptions) { o.PostBuild = &PostBuild{Vars: map[string]string{"a": "b"}} },
		"commonMetadata": func(o *BuildOptions) {
			o.CommonMetadata = &kustomizev1.CommonMetadata{Labels: map[string]string{"a": "b"}}
		},
		"one run": func(o *BuildOptions) { o.Root = small },
	} {
		told := false
		o := BuildOptions{Root: root, Path: "./big",
			Runs: func([]schema.GroupKind) func([]*unstructured.Unstructured) { told = true; return nil }}
		change(&o)
		mustBuild(t, o)
		if told {
			t.Errorf("%s: Runs was called", name)
		}
	}
}
