package kustomize

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
)

// largeTree is a base of n Deployments, n Services and n ConfigMaps spread
// over files of 30 documents, and an overlay patching and renaming them.
func largeTree(n int) map[string]string {
	tree := map[string]string{}
	var files []string
	var doc strings.Builder
	flush := func(i int) {
		name := fmt.Sprintf("objects-%03d.yaml", i)
		tree["base/"+name] = doc.String()
		files = append(files, name)
		doc.Reset()
	}
	for i := range n {
		fmt.Fprintf(&doc, `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%[1]d
  labels: {app: app-%[1]d, tier: web}
spec:
  replicas: 1
  selector:
    matchLabels: {app: app-%[1]d}
  template:
    metadata:
      labels: {app: app-%[1]d}
    spec:
      containers:
      - name: app
        image: ghcr.io/example/app:1.0.%[1]d
        envFrom:
        - configMapRef: {name: app-%[1]d}
        ports: [{containerPort: 8080, name: http}]
---
apiVersion: v1
kind: Service
metadata:
  name: app-%[1]d
spec:
  selector: {app: app-%[1]d}
  ports: [{port: 80, targetPort: http}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-%[1]d
data:
  LOG_LEVEL: info
  REGION: ${region:=eu}
`, i)
		if (i+1)%10 == 0 {
			flush(i / 10)
		}
	}
	if doc.Len() > 0 {
		flush(n / 10)
	}
	tree["base/kustomization.yaml"] = "resources:\n- " + strings.Join(files, "\n- ") + "\n"
	tree["overlay/kustomization.yaml"] = `resources: [../base]
namePrefix: prod-
labels:
- pairs: {env: prod}
images:
- name: ghcr.io/example/app
  newName: registry.example.com/app
`
	return tree
}

// BenchmarkBuild builds 1,500 objects (500 each of Deployments, Services,
// ConfigMaps) through an overlay, with spec patches, images, substitution
// and commonMetadata.
func BenchmarkBuild(b *testing.B) {
	root := newRoot(b, largeTree(500))
	opts := BuildOptions{
		Root:            root,
		Path:            "overlay",
		TargetNamespace: "bench",
		NoRemoteBases:   true,
		Patches: []meta.Patch{{
			Patch:  `[{"op":"replace","path":"/spec/replicas","value":2}]`,
			Target: &meta.Selector{Kind: "Deployment", LabelSelector: "tier=web"},
		}},
		Images:         []meta.Image{{Name: "ghcr.io/example/app", NewTag: "2.0.0"}},
		CommonMetadata: &kustomizev1.CommonMetadata{Labels: map[string]string{"team": "bench"}},
		PostBuild:      &PostBuild{Vars: map[string]string{"region": "us"}},
	}
	res, err := Build(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Objects) != 1500 {
		b.Fatalf("built %d objects", len(res.Objects))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Build(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1500, "ns/object")
}

// BenchmarkSubstitute isolates post-build substitution over the same 1,500
// objects.
func BenchmarkSubstitute(b *testing.B) {
	root := newRoot(b, largeTree(500))
	res, err := Build(context.Background(), BuildOptions{Root: root, Path: "overlay"})
	if err != nil {
		b.Fatal(err)
	}
	vars := map[string]string{"region": "us"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Substitute(res.Objects, vars, SubstituteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKustomizeBaseline runs kustomize alone on the same overlay, on
// the plain on-disk filesystem: the floor BenchmarkBuild is measured
// against (it adds the spec transformations, confinement, inspection,
// substitution, checksum and commonMetadata).
func BenchmarkKustomizeBaseline(b *testing.B) {
	root := newRoot(b, largeTree(500))
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = kustypes.LoadRestrictionsNone
	dir := filepath.Join(root, "overlay")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSmallBuild builds what each Kustomization of bench/fanout builds:
// four objects under a name prefix and a target namespace, where kustomize's
// fixed cost per run and the conversions around it are the whole cost.
func BenchmarkSmallBuild(b *testing.B) {
	root := newRoot(b, map[string]string{
		"app/kustomization.yaml":  "resources: [configmap.yaml, secret.yaml, serviceaccount.yaml, deployment.yaml]\n",
		"app/configmap.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\ndata:\n  greeting: hello\n",
		"app/secret.yaml":         "apiVersion: v1\nkind: Secret\nmetadata:\n  name: secret\nstringData:\n  token: t0ken\n",
		"app/serviceaccount.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: app\n",
		"app/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  labels: {app: bench}\n" +
			"spec:\n  replicas: 1\n  selector:\n    matchLabels: {app: bench}\n  template:\n    metadata:\n      labels: {app: bench}\n" +
			"    spec:\n      serviceAccountName: app\n      containers:\n      - name: app\n        image: registry.local/bench/app:1.0.0\n",
	})
	opts := BuildOptions{Root: root, Path: "app", TargetNamespace: "bench", NamePrefix: "ks-0001-", NoRemoteBases: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
}
