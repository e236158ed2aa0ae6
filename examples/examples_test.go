package examples_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/examples"
	"github.com/weir-gitops/weir/internal/kustomize"
	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
	"github.com/weir-gitops/weir/internal/source/generate"
)

// TestFleetBuilds builds every Kustomization of clusters/dev from the
// embedded fleet, as the controller would: post-build variables from the
// cluster-vars ConfigMap, SOPS decryption with the demo key. The cluster
// end of the story is in internal/cli/dev's tests.
func TestFleetBuilds(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, examples.Fleet()); err != nil {
		t.Fatal(err)
	}
	vars := clusterVars(t)
	dec, err := decrypt.New(map[string][]byte{"age.agekey": examples.DemoAgeKey()})
	if err != nil {
		t.Fatalf("the demo key: %v", err)
	}

	artifacts := generateArtifacts(t, root)
	objects := map[string]map[string]any{} // kind/namespace/name → object
	for _, k := range kustomizations(t) {
		base := root
		if ref := k.Spec.SourceRef; ref.Kind == sourcev1.ExternalArtifactKind {
			if base = artifacts[ref.Name]; base == "" {
				t.Fatalf("%s: no ArtifactGenerator of clusters/dev generates ExternalArtifact %s", k.Name, ref.Name)
			}
		}
		opts := kustomize.FromSpec(base, &k.Spec)
		if pb := k.Spec.PostBuild; pb != nil {
			merged := map[string]string{}
			for _, ref := range pb.SubstituteFrom {
				if ref.Kind != "ConfigMap" || ref.Name != "cluster-vars" {
					t.Fatalf("%s: substituteFrom %s/%s, the test knows only ConfigMap/cluster-vars", k.Name, ref.Kind, ref.Name)
				}
				for key, v := range vars {
					merged[key] = v
				}
			}
			for key, v := range pb.Substitute {
				merged[key] = v
			}
			opts.PostBuild = &kustomize.PostBuild{Vars: merged}
		}
		if k.Spec.Decryption != nil {
			opts.Decryptor = dec
		}
		res, err := kustomize.Build(context.Background(), opts)
		if err != nil {
			t.Fatalf("building Kustomization %s: %v", k.Name, err)
		}
		for _, o := range res.Objects {
			objects[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = o.Object
		}
	}

	for _, want := range []string{"Namespace//apps", "LimitRange/apps/container-defaults", "ClusterRole//apps-viewer",
		"Deployment/apps/podinfo", "Service/apps/podinfo", "Secret/apps/podinfo-token"} {
		if objects[want] == nil {
			t.Errorf("no %s in the builds", want)
		}
	}
	deploy := objects["Deployment/apps/podinfo"]
	spec, _ := deploy["spec"].(map[string]any)
	if replicas, _ := spec["replicas"].(int64); replicas != 2 {
		t.Errorf("podinfo replicas = %v (%T), want 2 from ${replicas:=2}", spec["replicas"], spec["replicas"])
	}
	meta, _ := deploy["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	if labels["app.kubernetes.io/environment"] != "dev" {
		t.Errorf("podinfo environment label = %v, want dev from ${cluster_name}", labels["app.kubernetes.io/environment"])
	}
	secret := objects["Secret/apps/podinfo-token"]
	if _, ok := secret["sops"]; ok {
		t.Error("the Secret still carries its sops stanza")
	}
	data, _ := yaml.Marshal(secret)
	if !strings.Contains(string(data), "weir-dev-demo-token") {
		t.Errorf("the Secret was not decrypted:\n%s", data)
	}
}

// TestLayersFollowTheRoot is seed 003's check, made mechanical: the root
// (flux-system, which weir dev creates) applies cluster-vars and the
// ArtifactGenerator, so every Kustomization must reach the root through
// dependsOn. One that substitutes from cluster-vars must reach it through
// Kustomizations of the root's own source: dependsOn is revision-gated
// only between Kustomizations of the same source, and any other path lets
// a push that changes cluster-vars be built with the old values. The walk
// also fails on a cycle or a dependency that does not exist.
func TestLayersFollowTheRoot(t *testing.T) {
	const root = "flux-system"
	ks := kustomizations(t)
	deps := map[string][]string{}
	onRootSource := map[string]bool{root: true}
	for _, k := range ks {
		deps[k.Name] = []string{}
		ref := k.Spec.SourceRef
		onRootSource[k.Name] = ref.Kind == sourcev1.GitRepositoryKind && ref.Name == root
		for _, d := range k.Spec.DependsOn {
			if d.Namespace != "" && d.Namespace != k.Namespace {
				t.Errorf("%s: dependsOn %s/%s leaves the namespace", k.Name, d.Namespace, d.Name)
			}
			deps[k.Name] = append(deps[k.Name], d.Name)
		}
	}
	// reachesRoot walks dependsOn from name; gated keeps to the edges
	// between Kustomizations of the root's source.
	var reachesRoot func(name string, gated bool, seen map[string]bool) bool
	reachesRoot = func(name string, gated bool, seen map[string]bool) bool {
		if gated && !onRootSource[name] {
			return false
		}
		if name == root {
			return true
		}
		if seen[name] {
			t.Errorf("dependsOn cycle through %s", name)
			return false
		}
		seen[name] = true
		if _, declared := deps[name]; !declared {
			t.Errorf("dependsOn names %s, which clusters/dev does not declare", name)
			return false
		}
		for _, d := range deps[name] {
			if reachesRoot(d, gated, seen) {
				return true
			}
		}
		return false
	}
	for _, k := range ks {
		if !reachesRoot(k.Name, false, map[string]bool{}) {
			t.Errorf("Kustomization %s does not depend, directly or through others, on %s: it can start before %s has applied what it needs", k.Name, root, root)
		}
		if k.Spec.PostBuild != nil && len(k.Spec.PostBuild.SubstituteFrom) > 0 && !reachesRoot(k.Name, true, map[string]bool{}) {
			t.Errorf("Kustomization %s substitutes from what %s applies but reaches it only through another source's Kustomizations, where dependsOn does not gate on the revision: it can be built with the old cluster-vars", k.Name, root)
		}
	}
}

// generateArtifacts builds, from the fleet copied to root, every
// ExternalArtifact the ArtifactGenerators of clusters/dev generate, as
// the source-watcher controller would: name → directory.
func generateArtifacts(t *testing.T, root string) map[string]string {
	t.Helper()
	data, err := fs.ReadFile(examples.Fleet(), "clusters/dev/artifacts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ag sourceextensionsv1beta1.ArtifactGenerator
	if err := yaml.UnmarshalStrict(data, &ag); err != nil {
		t.Fatalf("clusters/dev/artifacts.yaml: %v", err)
	}
	if err := generate.Validate(&ag.Spec); err != nil {
		t.Fatalf("ArtifactGenerator %s: %v", ag.Name, err)
	}
	sources := generate.Sources{}
	for _, s := range ag.Spec.Sources {
		if s.Kind != sourcev1.GitRepositoryKind || s.Name != "flux-system" {
			t.Fatalf("ArtifactGenerator %s: source %s/%s, the test knows only the fleet's own GitRepository", ag.Name, s.Kind, s.Name)
		}
		sources[s.Alias] = root
	}
	list, err := generate.Expand(&ag.Spec, sources)
	if err != nil {
		t.Fatalf("ArtifactGenerator %s: %v", ag.Name, err)
	}
	out := map[string]string{}
	for _, a := range list {
		dir := t.TempDir()
		if _, err := generate.Build(context.Background(), a.Spec.Copy, sources, dir, generate.Options{}); err != nil {
			t.Fatalf("ExternalArtifact %s: %v", a.Name, err)
		}
		out[a.Name] = dir
	}
	return out
}

// kustomizations reads the Kustomizations clusters/dev declares.
func kustomizations(t *testing.T) []kustomizev1.Kustomization {
	t.Helper()
	var ks []kustomizev1.Kustomization
	for _, name := range []string{"infrastructure.yaml", "apps.yaml"} {
		data, err := fs.ReadFile(examples.Fleet(), filepath.Join("clusters/dev", name))
		if err != nil {
			t.Fatal(err)
		}
		var k kustomizev1.Kustomization
		if err := yaml.UnmarshalStrict(data, &k); err != nil {
			t.Fatalf("clusters/dev/%s: %v", name, err)
		}
		ks = append(ks, k)
	}
	return ks
}

func clusterVars(t *testing.T) map[string]string {
	t.Helper()
	data, err := fs.ReadFile(examples.Fleet(), "clusters/dev/cluster-vars.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(data, &cm); err != nil {
		t.Fatalf("clusters/dev/cluster-vars.yaml: %v", err)
	}
	return cm.Data
}

// TestDemoKeyIsMarked keeps the demo key's warning where people look.
func TestDemoKeyIsMarked(t *testing.T) {
	key := string(examples.DemoAgeKey())
	if !strings.HasPrefix(key, "# DEMO ONLY") || !strings.Contains(key, "AGE-SECRET-KEY-") {
		t.Errorf("DEMO-ONLY.agekey must start with a DEMO ONLY comment and hold one age identity")
	}
	if _, err := fs.Stat(examples.Fleet(), "DEMO-ONLY.agekey"); err == nil {
		t.Error("the private key must not be part of the fleet repository")
	}
}
