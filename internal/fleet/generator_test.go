package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/fleet"
)

// TestGeneratedExternalArtifacts loads Flux's example laid out with an
// ArtifactGenerator: its ExternalArtifacts are local sources built from
// the generated trees, the trees are removed after Load, and a change
// under apps/ changes the apps Kustomization's input digest only.
func TestGeneratedExternalArtifacts(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/worktrees/kustomize-helm-example-artifacts")); err != nil {
		t.Fatal(err)
	}
	load := func() (*fleet.Cluster, map[string]string) {
		t.Helper()
		g, err := fleet.Load(context.Background(), fleet.Options{Dir: dir, Paths: []string{"clusters/staging"}})
		if err != nil {
			t.Fatal(err)
		}
		c := g.Clusters[0]
		digests := map[string]string{}
		for _, n := range c.Kustomizations() {
			digests[n.Object.GetName()] = n.InputDigest
			if n.Err != nil || !n.Built {
				t.Errorf("%s: built %v, error %v", n.ID(), n.Built, n.Err)
			}
		}
		return c, digests
	}
	c, before := load()
	if len(c.Generators) != 1 || len(c.Generators[0].Artifacts) != 2 {
		t.Fatalf("generators = %+v, want one generating two artifacts", c.Generators)
	}
	for _, key := range []string{"ExternalArtifact/flux-system/apps", "ExternalArtifact/flux-system/infrastructure"} {
		src := c.Sources[key]
		if src == nil || src.Dir == "" {
			t.Fatalf("%s is not a local source: %+v", key, src)
		}
		if _, err := os.Stat(src.Dir); !os.IsNotExist(err) {
			t.Errorf("%s's generated tree %s is left after Load", key, src.Dir)
		}
	}
	hr := c.Node("HelmRelease", "podinfo", "podinfo")
	if hr == nil || hr.File != "ExternalArtifact/flux-system/apps/base/podinfo/release.yaml" {
		t.Errorf("the HelmRelease's position names no file of the generated tree: %+v", hr)
	}
	values := filepath.Join(dir, "apps/staging/podinfo-values.yaml")
	data, err := os.ReadFile(values)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(values, []byte(strings.ReplaceAll(string(data), "staging.example", "stage.example")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, after := load()
	if before["apps"] == after["apps"] {
		t.Error("apps' digest did not change with a file of its artifact")
	}
	for _, ks := range []string{"infra-controllers", "infra-configs"} {
		if before[ks] != after[ks] {
			t.Errorf("%s's digest changed with a file outside the infrastructure artifact", ks)
		}
	}
}
