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
	"github.com/weir-gitops/weir/examples"
	"github.com/weir-gitops/weir/internal/kustomize"
	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
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

	objects := map[string]map[string]any{} // kind/namespace/name → object
	for _, k := range kustomizations(t) {
		opts := kustomize.FromSpec(root, &k.Spec)
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
// (flux-system, which weir dev creates) applies cluster-vars, so every
// Kustomization that substitutes from it must reach the root through
// dependsOn, or a push that changes cluster-vars can be built with the old
// values. dependsOn is revision-gated, so a path to the root is enough.
// The walk also fails on a cycle or a dependency that does not exist.
func TestLayersFollowTheRoot(t *testing.T) {
	const root = "flux-system"
	ks := kustomizations(t)
	deps := map[string][]string{}
	for _, k := range ks {
		deps[k.Name] = []string{}
		for _, d := range k.Spec.DependsOn {
			if d.Namespace != "" && d.Namespace != k.Namespace {
				t.Errorf("%s: dependsOn %s/%s leaves the namespace", k.Name, d.Namespace, d.Name)
			}
			deps[k.Name] = append(deps[k.Name], d.Name)
		}
	}
	var reachesRoot func(name string, seen map[string]bool) bool
	reachesRoot = func(name string, seen map[string]bool) bool {
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
			if reachesRoot(d, seen) {
				return true
			}
		}
		return false
	}
	for _, k := range ks {
		if !reachesRoot(k.Name, map[string]bool{}) {
			t.Errorf("Kustomization %s does not depend, directly or through others, on %s: it can be built before %s has applied the same revision's cluster-vars", k.Name, root, root)
		}
	}
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
