package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/examples"
	"github.com/weir-gitops/weir/internal/fleet"
)

// writeTree writes files (path → content) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func entries(g *fleet.Graph) []string {
	var out []string
	for _, c := range g.Clusters {
		out = append(out, c.Entry)
	}
	return out
}

// withFile is fleetRepo with one file replaced.
func withFile(path, content string) map[string]string {
	return with(fleetRepo, path, content)
}

func ids(nodes []*fleet.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.ID())
	}
	return out
}

// fleetRepo is a repository shaped like seed 003's: a shared
// clusters/base, a dev cluster with its own root sync, a prod cluster
// without one, and a Kustomization substituting from a Secret that a
// Kustomization found later applies.
var fleetRepo = map[string]string{
	"clusters/base/kustomization.yaml": "resources: [flux-system.yaml, platform.yaml, config.yaml, ext.yaml]\n",
	"clusters/base/flux-system.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1m, url: "https://example.com/org/fleet.git"}
`,
	"clusters/base/platform.yaml": `# platform substitutes from the Secret config applies
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: platform, namespace: flux-system}
spec:
  interval: 1m
  path: ./platform
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
  postBuild:
    substituteFrom:
      - {kind: Secret, name: vars}
`,
	"clusters/base/config.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: config, namespace: flux-system}
spec: {interval: 1m, path: ./config, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
`,
	"clusters/base/ext.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: ext, namespace: flux-system}
spec: {interval: 1m, url: "ssh://git@example.com/org/other.git"}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ext, namespace: flux-system}
spec: {interval: 1m, path: ./deploy, prune: true, sourceRef: {kind: GitRepository, name: ext}}
`,
	"clusters/dev/kustomization.yaml": "resources: [../base, sync.yaml]\n",
	"clusters/dev/sync.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1m, path: ./clusters/dev, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
`,
	"clusters/prod/kustomization.yaml": "resources: [../base]\n",
	"config/secret.yaml": `apiVersion: v1
kind: Secret
metadata: {name: vars, namespace: flux-system}
stringData: {greeting: hi}
`,
	"platform/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: greeting, namespace: default}
data: {text: "${greeting} there"}
`,
}

func TestLoadRepository(t *testing.T) {
	dir := writeTree(t, fleetRepo)
	other := writeTree(t, map[string]string{"deploy/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ext, namespace: default}\n"})
	g, err := fleet.Load(context.Background(), fleet.Options{Dir: dir,
		SourceURLs: []string{"git@example.com:org/fleet"}, Sources: map[string]string{"flux-system/ext": other}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"clusters/dev", "clusters/prod"}, entries(g)); diff != "" {
		t.Fatalf("entries (-want +got):\n%s", diff)
	}
	dev, prod := g.Clusters[0], g.Clusters[1]
	if dev.MissingRoot || !prod.MissingRoot {
		t.Errorf("MissingRoot dev=%v prod=%v, want false, true", dev.MissingRoot, prod.MissingRoot)
	}
	if prod.Node("Kustomization", "flux-system", "flux-system") != nil {
		t.Error("prod's implicit root is visible to Node")
	}
	want := []string{"Kustomization/flux-system/flux-system", "Kustomization/flux-system/platform",
		"Kustomization/flux-system/config", "Kustomization/flux-system/ext"}
	if diff := cmp.Diff(want, ids(dev.Nodes)); diff != "" {
		t.Errorf("dev nodes (-want +got):\n%s", diff)
	}
	if dev.Root.Implicit || dev.Root.File != "clusters/dev/sync.yaml" || dev.Root.Line != 1 {
		t.Errorf("dev root = %s:%d implicit=%v, want clusters/dev/sync.yaml:1", dev.Root.File, dev.Root.Line, dev.Root.Implicit)
	}

	platform := dev.Node("Kustomization", "flux-system", "platform")
	if platform.Err != nil || len(platform.Objects) != 1 {
		t.Fatalf("platform: err %v, %d objects", platform.Err, len(platform.Objects))
	}
	if got := platform.Objects[0].Object["data"].(map[string]any)["text"]; got != "hi there" {
		t.Errorf("platform's ConfigMap text = %q, want the Secret's stringData substituted", got)
	}
	if len(platform.Objects[0].GetAnnotations()) != 0 {
		t.Errorf("origin annotations left on the object: %v", platform.Objects[0].GetAnnotations())
	}
	if p := platform.Position; p.File != "clusters/base/platform.yaml" || p.Line != 2 {
		t.Errorf("platform position = %+v, want clusters/base/platform.yaml:2", p)
	}
	if p := platform.Origins[0]; p.File != "platform/cm.yaml" || p.Line != 1 {
		t.Errorf("ConfigMap position = %+v, want platform/cm.yaml:1", p)
	}
	if diff := cmp.Diff([]string{"platform/cm.yaml"}, platform.Files); diff != "" {
		t.Errorf("platform files (-want +got):\n%s", diff)
	}
	ext := dev.Node("Kustomization", "flux-system", "ext")
	if !ext.Built || ext.Err != nil || len(ext.Objects) != 1 || ext.SourceDir != other {
		t.Errorf("ext: built %v err %v objects %d dir %s, want built from --source", ext.Built, ext.Err, len(ext.Objects), ext.SourceDir)
	}
	if nodes := dev.Applied["Secret/flux-system/vars"]; len(nodes) != 1 || nodes[0].ID() != "Kustomization/flux-system/config" {
		t.Errorf("Applied[Secret vars] = %v", ids(nodes))
	}
}

// TestEntriesIgnoreWholeRepositoryPaths: a Kustomization of another
// repository with path ./ is not a root sync of this one.
func TestEntriesIgnoreWholeRepositoryPaths(t *testing.T) {
	files := withFile("clusters/base/ext.yaml", strings.Replace(fleetRepo["clusters/base/ext.yaml"], "path: ./deploy", "path: ./", 1))
	g, err := fleet.Load(context.Background(), fleet.Options{Dir: writeTree(t, files)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"clusters/dev", "clusters/prod"}, entries(g)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestLoadSkipsNonLocalSources(t *testing.T) {
	dir := writeTree(t, fleetRepo)
	g, err := fleet.Load(context.Background(), fleet.Options{Dir: dir, Paths: []string{"./clusters/dev/"}})
	if err != nil {
		t.Fatal(err)
	}
	c := g.Clusters[0]
	if len(g.Clusters) != 1 || c.Entry != "clusters/dev" {
		t.Fatalf("clusters = %d, entry %q", len(g.Clusters), c.Entry)
	}
	// Without SourceURLs the GitRepository flux-system is still the root's
	// own source; ext, of another repository, is recorded, not built.
	if n := c.Node("Kustomization", "flux-system", "platform"); !n.Built || n.Err != nil {
		t.Errorf("platform: built %v err %v", n.Built, n.Err)
	}
	if n := c.Node("Kustomization", "flux-system", "ext"); n.Built || n.Objects != nil {
		t.Errorf("ext was built from a source that is not local")
	}
}

func TestLoadGitRemote(t *testing.T) {
	// The root names a source that is not the fleet's GitRepository, so
	// flux-system is local only through the remote's URL.
	files := withFile("clusters/dev/sync.yaml", strings.Replace(fleetRepo["clusters/dev/sync.yaml"], "name: flux-system}}", "name: bootstrap}}", 1))
	dir := writeTree(t, files)
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateRemote(&gitconfig.RemoteConfig{Name: "origin", URLs: []string{"https://EXAMPLE.com/org/fleet/"}}); err != nil {
		t.Fatal(err)
	}
	g, err := fleet.Load(context.Background(), fleet.Options{Dir: dir, Paths: []string{"clusters/dev"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := g.Clusters[0].Node("Kustomization", "flux-system", "platform"); !n.Built {
		t.Error("platform not built: the GitRepository's URL is the remote's")
	}
}

func TestInputDigest(t *testing.T) {
	dir := writeTree(t, fleetRepo)
	load := func() map[string]string {
		g, err := fleet.Load(context.Background(), fleet.Options{Dir: dir, Paths: []string{"clusters/dev"}})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, n := range g.Clusters[0].Kustomizations() {
			out[n.Object.GetName()] = n.InputDigest
		}
		return out
	}
	before := load()
	if diff := cmp.Diff(before, load()); diff != "" {
		t.Fatalf("digests differ between two loads:\n%s", diff)
	}
	if err := os.WriteFile(filepath.Join(dir, "platform/cm.yaml"), []byte(strings.ReplaceAll(fleetRepo["platform/cm.yaml"], "there", "you")), 0o644); err != nil {
		t.Fatal(err)
	}
	after := load()
	if before["platform"] == after["platform"] {
		t.Error("platform's digest did not change with its file")
	}
	if before["config"] != after["config"] {
		t.Error("config's digest changed with a file it does not read")
	}
	if before["flux-system"] != after["flux-system"] {
		t.Error("the root's digest changed with a file it does not read")
	}
}

// TestLoadExamples loads weir's example fleet from its embedded file
// system: an implicit root, the variables from cluster-vars, and the SOPS
// Secret decrypted only with the key.
func TestLoadExamples(t *testing.T) {
	for _, withKey := range []bool{false, true} {
		opts := fleet.Options{FS: examples.Fleet()}
		if withKey {
			opts.DecryptKeys = map[string][]byte{"demo.agekey": examples.DemoAgeKey()}
		}
		g, err := fleet.Load(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		c := g.Clusters[0]
		want := []string{"Kustomization/flux-system/flux-system", "Kustomization/flux-system/infrastructure",
			"Kustomization/flux-system/apps", "HelmRelease/apps/hello"}
		if diff := cmp.Diff(want, ids(c.Nodes)); diff != "" {
			t.Fatalf("nodes (-want +got):\n%s", diff)
		}
		if !c.Root.Implicit || c.MissingRoot {
			t.Errorf("root implicit=%v missing=%v, want the implicit bootstrap root", c.Root.Implicit, c.MissingRoot)
		}
		apps := c.Node("Kustomization", "flux-system", "apps")
		if apps.Err != nil || apps.Vars["cluster_name"] != "dev" || apps.Vars["app_tier"] != "frontend" {
			t.Fatalf("apps: err %v vars %v", apps.Err, apps.Vars)
		}
		hr := c.Node("HelmRelease", "apps", "hello")
		if hr.Parent != apps || hr.Source != "HelmRepository/flux-system/charts" || hr.File != "apps/base/hello/helmrelease.yaml" || hr.Line != 7 {
			t.Errorf("hello: parent %v source %s at %s:%d", hr.Parent.ID(), hr.Source, hr.File, hr.Line)
		}
		secret := c.Applied["Secret/apps/podinfo-token"]
		if len(secret) != 1 {
			t.Fatalf("podinfo-token applied by %v", ids(secret))
		}
		i := slices.IndexFunc(apps.Objects, func(o *unstructured.Unstructured) bool { return o.GetName() == "podinfo-token" })
		_, encrypted := apps.Objects[i].Object["sops"]
		if encrypted == withKey {
			t.Errorf("with key %v: Secret encrypted = %v", withKey, encrypted)
		}
	}
}
